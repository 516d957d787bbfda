package dev.impipe.runtime.domain;

import java.util.regex.Pattern;

/**
 * Id rules shared by ingest and the topologies. User, device, group and client message ids are 1-128 characters of
 * letters, digits and {@code . _ - @}; no {@code :}, so a direct chat's canonical id {@code d:<a>:<b>} never collides
 * with a group id (a group's conversation id is its group id).
 */
public final class Ids {

  public static final int MAX_LENGTH = 128;
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._@-]{1," + MAX_LENGTH + "}");
  public static final String DIRECT_PREFIX = "d:";
  public static final String GROUP_TIMELINE_PREFIX = "#";

  private Ids() {}

  public static boolean valid(String id) {
    return id != null && ID.matcher(id).matches();
  }

  /** The canonical conversation id of a direct chat: the same for both directions, so one partition, in order. */
  public static String direct(String a, String b) {
    return a.compareTo(b) <= 0 ? DIRECT_PREFIX + a + ":" + b : DIRECT_PREFIX + b + ":" + a;
  }

  /** Key of a large group's own timeline in the inbox topic; {@code #} cannot start a user id. */
  public static String groupTimeline(String groupId) {
    return GROUP_TIMELINE_PREFIX + groupId;
  }

  public static boolean isGroupTimeline(String key) {
    return key != null && key.startsWith(GROUP_TIMELINE_PREFIX);
  }

  public static boolean isDirect(String conversationId) {
    return conversationId != null && conversationId.startsWith(DIRECT_PREFIX);
  }
}
