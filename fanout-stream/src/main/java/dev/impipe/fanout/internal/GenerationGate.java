package dev.impipe.fanout.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Sits before the inbox sink: writes each entry to the live inbox generation, fences the old one when a switch asks
 * ({@link SwitchRules}) and holds entries back (in order, in the task's store, so exactly once under EOS) until the
 * new generation is live. The fence record goes to the control topic in the task's transaction, after every entry
 * the task wrote to the old generation. A wall-clock tick fences and releases also when no message arrives.
 */
public final class GenerationGate implements Processor<String, SpecificRecord, String, Object> {

  /** The names and parts the gate is given by the topology. */
  public record Wiring(int base, String baseInbox, Supplier<Optional<Switch>> control, String heldStore,
      String inboxSink, String controlSink, Serde<InboxEntry> entrySerde, Duration tick) {}

  private static final String FENCED = "fenced";
  private static final String NEXT = "next";
  private static final String HELD = "h";

  private final Wiring wiring;
  private ProcessorContext<String, Object> context;
  private KeyValueStore<String, byte[]> store;
  // The store's two counters, read once at init and then kept beside it: every inbox entry passes here, and a
  // deployment that never switches should not pay two store reads per entry for them.
  private int fenced;
  private long next;

  public GenerationGate(Wiring wiring) {
    this.wiring = wiring;
  }

  @Override
  public void init(ProcessorContext<String, Object> context) {
    this.context = context;
    this.store = context.getStateStore(wiring.heldStore());
    this.fenced = (int) readLong(FENCED);
    this.next = readLong(NEXT);
    context.schedule(wiring.tick(), PunctuationType.WALL_CLOCK_TIME, now -> apply(null));
  }

  @Override
  public void process(Record<String, SpecificRecord> record) {
    apply(record);
  }

  private void apply(Record<String, SpecificRecord> record) {
    SwitchRules.Decision d = SwitchRules.decide(wiring.base(), wiring.control().get(), fenced);
    if (d.fenceTo() > 0) {
      int task = context.taskId().partition();
      context.forward(new Record<String, Object>(GenerationControl.fenceKey(d.fenceTo(), task),
          Integer.toString(task), context.currentSystemTimeMs()), wiring.controlSink());
      store.put(FENCED, Integer.toString(d.fenceTo()).getBytes(StandardCharsets.UTF_8));
      fenced = d.fenceTo();
    }
    if (d.hold()) {
      if (record != null) {
        hold(record);
      }
      return;
    }
    release(d.writeTo());
    if (record != null) {
      write(record, d.writeTo());
    }
  }

  private void hold(Record<String, SpecificRecord> record) {
    byte[] value = wiring.entrySerde().serializer().serialize(wiring.baseInbox(), (InboxEntry) record.value());
    store.put(heldKey(next), new HeldEntry(record.key(), value, record.timestamp(), record.headers()).encode());
    next++;
    store.put(NEXT, Long.toString(next).getBytes(StandardCharsets.UTF_8));
  }

  private void release(int generation) {
    if (next == 0) {
      return;
    }
    try (KeyValueIterator<String, byte[]> held = store.prefixScan(HELD, new StringSerializer())) {
      while (held.hasNext()) {
        KeyValue<String, byte[]> kv = held.next();
        HeldEntry e = HeldEntry.decode(kv.value);
        InboxEntry entry = wiring.entrySerde().deserializer().deserialize(wiring.baseInbox(), e.value());
        write(new Record<>(e.key(), (SpecificRecord) entry, e.timestamp(), e.headers()), generation);
        store.delete(kv.key);
      }
    }
    store.delete(NEXT);
    next = 0;
  }

  private void write(Record<String, SpecificRecord> record, int generation) {
    if (generation == wiring.base() && record.headers().lastHeader(GenerationControl.GENERATION_HEADER) == null) {
      context.forward(record.<Object>withValue(record.value()), wiring.inboxSink()); // no switch: as it came
      return;
    }
    Record<String, Object> out = new Record<>(record.key(), record.value(), record.timestamp(),
        new RecordHeaders(record.headers().toArray()));
    out.headers().remove(GenerationControl.GENERATION_HEADER);
    if (generation != wiring.base()) {
      out.headers().add(GenerationControl.GENERATION_HEADER,
          Integer.toString(generation).getBytes(StandardCharsets.UTF_8));
    }
    context.forward(out, wiring.inboxSink());
  }

  private long readLong(String key) {
    byte[] v = store.get(key);
    return v == null ? 0 : Long.parseLong(new String(v, StandardCharsets.UTF_8));
  }

  private static String heldKey(long n) {
    return HELD + String.format("%019d", n);
  }
}
