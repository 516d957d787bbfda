package dev.impipe.edge.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Picks who a test request acts as, the way a real client would: the user a {@code /v1/users/{u}} path names, the
 * {@code senderId} / {@code userId} of a body, the first party of a direct conversation, and for a group's
 * membership and history its creator (the first user a test added to it: the group's admin). Tests that need
 * another caller pass the user explicitly.
 */
public final class TestCallers {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern USER = Pattern.compile("^/v1/users/([^/?]+)");
  private static final Pattern MEMBER = Pattern.compile("^/v1/groups/([^/]+)/members/([^/?]+)");
  private static final Pattern CONVERSATION = Pattern.compile("^/v1/conversations/([^/]+)/");

  private final Function<String, String> tokens;
  private final Map<String, String> groupAdmins = new ConcurrentHashMap<>();

  /** @param tokens mints a token for a user */
  public TestCallers(Function<String, String> tokens) {
    this.tokens = tokens;
  }

  /** Callers with tokens signed by {@link TestTokens}' secret (runtimes started with {@link TestTokens#env()}). */
  public static TestCallers withTestSecret() {
    return new TestCallers(TestTokens::token);
  }

  /** Makes {@code user} the caller for {@code group}'s membership changes and history (its creator). */
  public TestCallers admin(String group, String user) {
    groupAdmins.put(group, user);
    return this;
  }

  /** {@code Bearer <token>} for {@code user}. */
  public String bearer(String user) {
    return "Bearer " + tokens.apply(user);
  }

  /** {@code Bearer <token>} for whoever the request acts as (see the class comment). */
  public String bearerFor(String method, String pathAndQuery, String body) {
    String path = pathAndQuery.replaceFirst("^https?://[^/]+", "");
    return bearer(actor(path, body));
  }

  /** The user a request acts as. */
  public String actor(String path, String body) {
    Matcher m = USER.matcher(path);
    if (m.find()) {
      return decode(m.group(1));
    }
    m = MEMBER.matcher(path);
    if (m.find()) {
      String user = decode(m.group(2));
      return groupAdmins.computeIfAbsent(decode(m.group(1)), g -> user);
    }
    m = CONVERSATION.matcher(path);
    if (m.find()) {
      String conversation = decode(m.group(1));
      if (conversation.startsWith("d:")) {
        return conversation.split(":")[1];
      }
      String admin = groupAdmins.get(conversation);
      if (admin != null) {
        return admin;
      }
    }
    if (body != null && !body.isBlank()) {
      try {
        JsonNode node = JSON.readTree(body);
        for (String field : new String[] {"senderId", "userId"}) {
          if (node.hasNonNull(field)) {
            return node.get(field).asText();
          }
        }
      } catch (java.io.IOException | RuntimeException e) {
        // not JSON: no actor from the body
      }
    }
    throw new IllegalArgumentException("no caller for " + path + ": pass the user explicitly");
  }

  private static String decode(String segment) {
    return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
  }
}
