package dev.impipe.inbox;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Where a copied inbox entry was in the generation it was copied from: headers {@code im.prev-generation} and
 * {@code im.prev-seq}, decimal text (readable in {@code bin/im tail}). A record copied twice keeps the newest pair.
 */
public record PrevPosition(int generation, long seq) {

  public static final String PREV_GENERATION = "im.prev-generation";
  public static final String PREV_SEQ = "im.prev-seq";

  /** Replaces any previous pair in {@code headers} with this one. */
  public void writeTo(Headers headers) {
    headers.remove(PREV_GENERATION);
    headers.remove(PREV_SEQ);
    headers.add(PREV_GENERATION, Integer.toString(generation).getBytes(StandardCharsets.UTF_8));
    headers.add(PREV_SEQ, Long.toString(seq).getBytes(StandardCharsets.UTF_8));
  }

  /** The pair in {@code headers}, if it has both (a record written in this generation has none). */
  public static Optional<PrevPosition> readFrom(Headers headers) {
    Header g = headers.lastHeader(PREV_GENERATION);
    Header s = headers.lastHeader(PREV_SEQ);
    if (g == null || s == null || g.value() == null || s.value() == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(new PrevPosition(Integer.parseInt(new String(g.value(), StandardCharsets.UTF_8)),
          Long.parseLong(new String(s.value(), StandardCharsets.UTF_8))));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
