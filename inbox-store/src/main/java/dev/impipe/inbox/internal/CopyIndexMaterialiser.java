package dev.impipe.inbox.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.PrevPosition;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * The copy index of a grown inbox (ADR 0014, Open 5): for every entry {@code bin/im inbox grow} copied into this
 * generation (headers {@code im.prev-generation}, {@code im.prev-seq}, see {@link PrevPosition}), the key
 * {@code owner, prevGeneration, prevSeq} ({@code StoreKeys#copied}) -> its seq here, in a window store by record
 * time that drops its segments after the inbox retention (the copy keeps each entry's timestamp, so an index entry
 * goes with its entry). One put per copied entry; an entry without the headers costs two header lookups.
 *
 * <p>The grow writes every copied entry of a partition before the first entry the fan-out writes to it (offline:
 * the fan-out starts after the grow; online: the fan-out writes to the new generation after {@code LIVE}, which
 * follows the copy). So the first entry without the headers proves that this partition's copied entries are all
 * applied: it is recorded once, its offset under {@code StoreKeys#copyApplied}, and kept in memory after that.
 */
public final class CopyIndexMaterialiser implements Processor<String, InboxEntry, Void, Void> {

  private final String indexStore;
  private final String appliedStore;
  private ProcessorContext<Void, Void> context;
  private WindowStore<Bytes, Long> index;
  private KeyValueStore<Bytes, Long> applied;
  private boolean copyApplied;

  public CopyIndexMaterialiser(String indexStore, String appliedStore) {
    this.indexStore = indexStore;
    this.appliedStore = appliedStore;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.index = context.getStateStore(indexStore);
    this.applied = context.getStateStore(appliedStore);
    this.copyApplied = applied.get(StoreKeys.copyApplied()) != null;
  }

  @Override
  public void process(Record<String, InboxEntry> record) {
    Optional<PrevPosition> prev = PrevPosition.readFrom(record.headers());
    if (prev.isEmpty()) {
      if (!copyApplied) {
        applied.put(StoreKeys.copyApplied(), offset());
        copyApplied = true;
      }
      return;
    }
    InboxEntry e = record.value();
    // What the inbox materialiser rejects is not indexed either: no entry, no position.
    if (e == null || record.key() == null || !record.key().equals(e.getUserId()) || prev.get().seq() < 0) {
      return;
    }
    index.put(StoreKeys.copied(record.key(), prev.get().generation(), prev.get().seq()), offset(),
        record.timestamp());
  }

  private long offset() {
    return context.recordMetadata().orElseThrow(() -> new IllegalStateException("no record metadata")).offset();
  }
}
