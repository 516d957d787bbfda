package dev.impipe.runtime.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler.Result;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

class DeadLetterProductionExceptionHandlerTest {

  private final DeadLetterProductionExceptionHandler handler = new DeadLetterProductionExceptionHandler();
  private final ProducerRecord<byte[], byte[]> output = new ProducerRecord<>("im.inbox", new byte[1], new byte[2]);

  @Test
  void anOutputThatCanNeverBeWrittenSendsItsInputToTheDeadLetterQueueAndCarriesOn() {
    handler.configure(Map.of("errors.dead.letter.queue.topic.name", "im.rejected"));
    var response = handler.handleError(context(), output, new RecordTooLargeException("2 MB > 1 MB"));

    assertThat(response.result()).isEqualTo(Result.RESUME);
    assertThat(response.deadLetterQueueRecords()).singleElement().satisfies(r -> {
      assertThat(r.topic()).isEqualTo("im.rejected");
      assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("source-key");
      assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("source-value");
      assertThat(header(r.headers(), "__streams.errors.message")).contains("im.inbox").contains("2 MB > 1 MB");
      assertThat(header(r.headers(), "__streams.errors.topic")).isEqualTo("im.messages");
      assertThat(header(r.headers(), "__streams.errors.offset")).isEqualTo("42");
      assertThat(header(r.headers(), "im.reject.code")).isEqualTo("UNWRITABLE");
    });
  }

  @Test
  void aPunctuationsOutputThatCanNeverBeWrittenGoesToTheDeadLetterQueueAsItself() {
    handler.configure(Map.of("errors.dead.letter.queue.topic.name", "im.rejected"));
    RecordHeaders headers = new RecordHeaders();
    headers.add("im.scheduled-at", "123".getBytes(StandardCharsets.UTF_8));
    ProducerRecord<byte[], byte[]> delayed = new ProducerRecord<>("im.gone", null, "k".getBytes(StandardCharsets.UTF_8),
        "v".getBytes(StandardCharsets.UTF_8), headers);

    var response = handler.handleError(punctuationContext(), delayed, new RecordTooLargeException("too big"));

    assertThat(response.result()).isEqualTo(Result.RESUME);
    assertThat(response.deadLetterQueueRecords()).singleElement().satisfies(r -> {
      assertThat(r.topic()).isEqualTo("im.rejected");
      assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("k");
      assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("v");
      assertThat(header(r.headers(), "im.scheduled-at")).isEqualTo("123");
      assertThat(header(r.headers(), "__streams.errors.topic")).isEqualTo("im.gone");
      assertThat(header(r.headers(), "__streams.errors.message")).contains("too big");
    });
  }

  @Test
  void aPassingOutageFailsSoExactlyOnceRetriesInsteadOfDroppingTheRecord() {
    handler.configure(Map.of("errors.dead.letter.queue.topic.name", "im.rejected"));
    assertThat(handler.handleError(context(), output, new TimeoutException("broker away")).result())
        .isEqualTo(Result.FAIL);
  }

  private static String header(Headers headers, String name) {
    return new String(headers.lastHeader(name).value(), StandardCharsets.UTF_8);
  }

  private static ErrorHandlerContext punctuationContext() {
    return new ErrorHandlerContext() {
      @Override
      public String topic() { return null; }
      @Override
      public int partition() { return -1; }
      @Override
      public long offset() { return -1; }
      @Override
      public Headers headers() { return new RecordHeaders(); }
      @Override
      public String processorNodeId() { return "delay-scheduler"; }
      @Override
      public TaskId taskId() { return new TaskId(0, 3); }
      @Override
      public long timestamp() { return 0; }
      @Override
      public byte[] sourceRawKey() { return null; }
      @Override
      public byte[] sourceRawValue() { return null; }
    };
  }

  private static ErrorHandlerContext context() {
    return new ErrorHandlerContext() {
      @Override
      public String topic() { return "im.messages"; }
      @Override
      public int partition() { return 3; }
      @Override
      public long offset() { return 42; }
      @Override
      public Headers headers() { return new RecordHeaders(); }
      @Override
      public String processorNodeId() { return "fanout-messages"; }
      @Override
      public TaskId taskId() { return new TaskId(0, 3); }
      @Override
      public long timestamp() { return 0; }
      @Override
      public byte[] sourceRawKey() { return "source-key".getBytes(StandardCharsets.UTF_8); }
      @Override
      public byte[] sourceRawValue() { return "source-value".getBytes(StandardCharsets.UTF_8); }
    };
  }
}
