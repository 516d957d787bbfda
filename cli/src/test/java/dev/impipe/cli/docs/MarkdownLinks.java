package dev.impipe.cli.docs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The links and heading anchors of one Markdown text, as a code host renders them: inline links {@code [text](target)}
 * and images outside fenced code blocks and code spans, and GitHub's heading slugs (lower case, punctuation dropped,
 * spaces to hyphens, {@code -1}, {@code -2} for repeats). Pure: no files.
 */
final class MarkdownLinks {

  private static final Pattern INLINE_LINK =
      Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(\\s*<?([^)\\s>]+)>?"
          + "(?:\\s+\"[^\"]*\")?\\s*\\)");
  private static final Pattern CODE_SPAN = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");
  private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

  private MarkdownLinks() {
  }

  /** A link target: the path part (empty for a link within the same page) and the anchor (empty when none). */
  record Link(int line, String target, String path, String anchor) {}

  /** Every relative link of {@code markdown} (links with a scheme, such as {@code https:}, are left out). */
  static List<Link> relativeLinks(String markdown) {
    List<Link> links = new ArrayList<>();
    int lineNo = 0;
    for (String line : proseLines(markdown)) {
      lineNo++;
      if (line == null) {
        continue;
      }
      Matcher m = INLINE_LINK.matcher(CODE_SPAN.matcher(line).replaceAll(""));
      while (m.find()) {
        String target = m.group(1);
        if (SCHEME.matcher(target).find() || target.startsWith("//")) {
          continue;
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? "" : target.substring(hash + 1);
        int query = path.indexOf('?');
        links.add(new Link(lineNo, target, query < 0 ? path : path.substring(0, query), anchor));
      }
    }
    return links;
  }

  /** The anchors the headings of {@code markdown} get on a code host. */
  static Set<String> anchors(String markdown) {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    for (String line : proseLines(markdown)) {
      if (line == null) {
        continue;
      }
      Matcher m = HEADING.matcher(line);
      if (m.matches()) {
        String slug = slug(m.group(2));
        int n = seen.merge(slug, 1, Integer::sum);
        anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
      }
    }
    return anchors;
  }

  /** GitHub's slug of a heading's text. */
  static String slug(String heading) {
    String text = heading.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1").toLowerCase(Locale.ROOT);
    StringBuilder slug = new StringBuilder();
    text.codePoints().forEach(c -> {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        slug.appendCodePoint(c);
      } else if (c == ' ') {
        slug.append('-');
      }
    });
    return slug.toString();
  }

  /** The lines of {@code markdown}, with {@code null} in place of every line inside a fenced code block. */
  private static List<String> proseLines(String markdown) {
    List<String> lines = new ArrayList<>();
    String fence = null;
    for (String line : markdown.split("\n", -1)) {
      String trimmed = line.stripLeading();
      if (fence == null && (trimmed.startsWith("```") || trimmed.startsWith("~~~"))) {
        fence = trimmed.substring(0, 3);
        lines.add(null);
      } else if (fence != null) {
        if (trimmed.startsWith(fence)) {
          fence = null;
        }
        lines.add(null);
      } else {
        lines.add(line);
      }
    }
    return lines;
  }
}
