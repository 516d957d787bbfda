package dev.impipe.inbox.internal;

import dev.impipe.avro.DeviceCursor;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/** Applies cursor commits of {@code im.device-cursors} to the cursor store; a cursor only moves forward. */
public final class CursorMaterialiser implements Processor<String, DeviceCursor, Void, Void> {

  private final String cursorStore;
  private KeyValueStore<Bytes, Long> cursors;

  public CursorMaterialiser(String cursorStore) {
    this.cursorStore = cursorStore;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    cursors = context.getStateStore(cursorStore);
  }

  @Override
  public void process(Record<String, DeviceCursor> record) {
    DeviceCursor cursor = record.value();
    if (record.key() == null || cursor == null) {
      throw new IllegalArgumentException("cursor record needs a key (userId) and a value");
    }
    if (!record.key().equals(cursor.getUserId())) {
      throw new IllegalArgumentException("key '" + record.key() + "' is not the userId of the cursor ('"
          + cursor.getUserId() + "')");
    }
    if (cursor.getSeq() < 0) {
      throw new IllegalArgumentException("cursor seq must not be negative, got " + cursor.getSeq());
    }
    Bytes key = StoreKeys.cursor(cursor.getUserId(), cursor.getDeviceId());
    Long current = cursors.get(key);
    // Commits can arrive out of order (two requests racing, a retried PUT): an older one never moves it back.
    if (current == null || cursor.getSeq() > current) {
      cursors.put(key, cursor.getSeq());
    }
  }
}
