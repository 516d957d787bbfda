package dev.impipe.bench.jmh;

import dev.impipe.ack.wheel.WheelCodec;
import dev.impipe.delay.internal.ScheduleCodec;
import dev.impipe.fanout.internal.MemberKeys;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.utils.Bytes;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/** Key codecs on the hot paths: fan-out membership keys, the ACK wheel's keys, the delay schedule keys. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CodecBench {

  private final String group = "g-4711";
  private final String user = "user-123456";
  private final Bytes memberKey = MemberKeys.key(group, user);
  private final byte[] slotKey = WheelCodec.slot(1_732_000_000L, user, "device-1");
  private final byte[] scheduleId = "m0123456789abcdef0123456789abc".getBytes(StandardCharsets.UTF_8);
  private long n;

  @Benchmark
  public Bytes memberKeyEncode() {
    return MemberKeys.key(group, user);
  }

  @Benchmark
  public Bytes memberGroupPrefix() {
    return MemberKeys.groupPrefix(group);
  }

  @Benchmark
  public String memberKeyDecodeUser() {
    return MemberKeys.userId(memberKey);
  }

  @Benchmark
  public byte[] slotKeyEncode() {
    return WheelCodec.slot(1_732_000_000L + (n++ & 1023), user, "device-1");
  }

  @Benchmark
  public WheelCodec.SlotKey slotKeyDecode() {
    return WheelCodec.decodeSlot(slotKey);
  }

  @Benchmark
  public byte[] deviceKeyEncode() {
    return WheelCodec.device(user, "device-" + (n++ & 7));
  }

  @Benchmark
  public byte[] scheduleKeyEncode() {
    return ScheduleCodec.scheduleKey(1_732_000_000_000L + (n++ & 4095), scheduleId);
  }
}
