package dev.impipe.runtime.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.testkit.StreamsTestConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The production Streams settings ({@link StreamsTestConfig#forDriver}): a {@link RejectedRecord} goes to im.rejected
 * with its reason and the processing goes on; any other exception (a bug) is not dead-lettered, it fails.
 */
class DeadLetterProcessingExceptionHandlerTest {

  private TopologyTestDriver driver;
  private TestInputTopic<String, String> input;
  private TestOutputTopic<byte[], byte[]> output;
  private TestOutputTopic<byte[], byte[]> rejected;

  @BeforeEach
  void start() {
    Topology topology = new Topology();
    topology.addSource("in", Serdes.String().deserializer(), Serdes.String().deserializer(), "im.in");
    topology.addProcessor("check", () -> new Processor<String, String, String, String>() {
      private org.apache.kafka.streams.processor.api.ProcessorContext<String, String> context;

      private boolean rejectLater;

      @Override
      public void init(org.apache.kafka.streams.processor.api.ProcessorContext<String, String> ctx) {
        context = ctx;
        ctx.schedule(Duration.ofSeconds(1), PunctuationType.WALL_CLOCK_TIME, now -> {
          if (rejectLater) {
            throw new RejectedRecord("INVALID", "a punctuation has no input record to reject");
          }
        });
      }

      @Override
      public void process(Record<String, String> record) {
        switch (record.value()) {
          case "later" -> rejectLater = true;
          case "bad" -> throw new RejectedRecord("NOT_MEMBER", "sender " + record.key() + " is not a member");
          case "bug" -> throw new NullPointerException("a bug");
          default -> context.forward(record);
        }
      }
    }, "in");
    topology.addSink("out", "im.out", Serdes.String().serializer(), Serdes.String().serializer(), "check");
    Properties props = StreamsTestConfig.forDriver("reject-test");
    driver = new TopologyTestDriver(topology, props);
    input = driver.createInputTopic("im.in", new StringSerializer(), new StringSerializer());
    output = driver.createOutputTopic("im.out", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    rejected = driver.createOutputTopic(props.getProperty(StreamsConfig.ERRORS_DEAD_LETTER_QUEUE_TOPIC_NAME_CONFIG),
        new ByteArrayDeserializer(), new ByteArrayDeserializer());
  }

  @AfterEach
  void close() {
    driver.close();
  }

  @Test
  void aRejectedRecordGoesToTheRejectedTopicAsItCameWithItsReasonAndProcessingGoesOn() {
    // Given a record with a header the processor rejects, then a good one
    Headers headers = new RecordHeaders().add("trace", "t1".getBytes(StandardCharsets.UTF_8));
    input.pipeInput(new TestRecord<>("mallory", "bad", headers, 5_000L));
    input.pipeInput("alice", "good");

    // Then the rejected one is in im.rejected: key, value and headers as they came, plus the reason
    assertThat(rejected.readRecordsToList()).singleElement().satisfies(r -> {
      assertThat(text(r.key())).isEqualTo("mallory");
      assertThat(text(r.value())).isEqualTo("bad");
      assertThat(r.timestamp()).isEqualTo(5_000L);
      assertThat(header(r.headers(), "trace")).isEqualTo("t1");
      assertThat(header(r.headers(), "__streams.errors.message")).isEqualTo("sender mallory is not a member");
      assertThat(header(r.headers(), RejectedHeaders.CODE)).isEqualTo("NOT_MEMBER");
      assertThat(header(r.headers(), "__streams.errors.exception")).isEqualTo(RejectedRecord.class.getName());
      assertThat(header(r.headers(), "__streams.errors.topic")).isEqualTo("im.in");
      assertThat(header(r.headers(), "__streams.errors.partition")).isEqualTo("0");
      assertThat(header(r.headers(), "__streams.errors.offset")).isEqualTo("0");
    });
    // And the good one went through
    assertThat(output.readRecordsToList()).map(r -> text(r.value())).containsExactly("good");
  }

  @Test
  void aBugIsNotDeadLetteredButFails() {
    // When a processor throws a NullPointerException
    // Then it fails the processing (TopologyTestDriver throws what would kill the stream thread)
    assertThatThrownBy(() -> input.pipeInput("alice", "bug")).isInstanceOf(StreamsException.class)
        .hasRootCauseInstanceOf(NullPointerException.class);
    // And nothing went to im.rejected
    assertThat(rejected.isEmpty()).isTrue();
    assertThat(output.isEmpty()).isTrue();
  }

  @Test
  void aRejectedRecordThrownByAPunctuationFailsForThereIsNoInputRecordToDeadLetter() {
    // Given a punctuation that will throw a RejectedRecord
    input.pipeInput("alice", "later");
    // When it runs (now = 1 s later), then it fails, and nothing went to im.rejected
    assertThatThrownBy(() -> driver.advanceWallClockTime(Duration.ofSeconds(1)))
        .hasRootCauseInstanceOf(RejectedRecord.class);
    assertThat(rejected.isEmpty()).isTrue();
  }

  private static String text(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  private static String header(Headers headers, String name) {
    return headers.lastHeader(name) == null ? null : text(headers.lastHeader(name).value());
  }
}
