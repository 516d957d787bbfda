package dev.impipe.fanout.internal;

import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.TopicNames;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.RecordContext;
import org.apache.kafka.streams.processor.TopicNameExtractor;

/**
 * The inbox sink's topic per record: the configured generation's inbox, or the one named by the
 * {@link GenerationControl#GENERATION_HEADER} the {@link GenerationGate} put on an entry for another generation.
 */
public final class InboxTopicChooser implements TopicNameExtractor<String, Object> {

  private final TopicNames names;

  public InboxTopicChooser(TopicNames names) {
    this.names = names;
  }

  @Override
  public String extract(String key, Object value, RecordContext recordContext) {
    Header h = recordContext.headers() == null ? null
        : recordContext.headers().lastHeader(GenerationControl.GENERATION_HEADER);
    if (h == null) {
      return names.inbox();
    }
    return GenerationControl.inboxOf(names, Integer.parseInt(new String(h.value(), StandardCharsets.UTF_8)));
  }
}
