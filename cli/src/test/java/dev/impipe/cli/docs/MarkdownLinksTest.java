package dev.impipe.cli.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link between the project's Markdown files (README.md and docs/) resolves: the file or folder exists
 * in the tree, and an anchor into a Markdown file names one of its headings.
 */
class MarkdownLinksTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  @Test
  void inlineLinksAreFoundOutsideCodeAndSplitIntoPathAndAnchor() {
    // Given a page with a relative link, an anchor, a web link, and links inside code
    String md = "See [a](docs/a.md#x-y) and [b](#local), [web](https://example.org), ![img](img/p.png).\n"
        + "`[not](a link)` is code.\n```\n[also](not.md)\n```\n[c](../c.md \"title\")\n";

    // When its relative links are listed
    List<MarkdownLinks.Link> links = MarkdownLinks.relativeLinks(md);

    // Then only the prose links without a scheme are there, path and anchor apart
    assertThat(links).extracting(MarkdownLinks.Link::target)
        .containsExactly("docs/a.md#x-y", "#local", "img/p.png", "../c.md");
    assertThat(links.get(0).path()).isEqualTo("docs/a.md");
    assertThat(links.get(0).anchor()).isEqualTo("x-y");
    assertThat(links.get(1).path()).isEmpty();
    assertThat(links.get(3).line()).isEqualTo(6);
  }

  @Test
  void headingsGetTheSlugsACodeHostGivesThem() {
    // Given headings with code, punctuation, a link and a repeat
    String md = "# Title\n## `bin/im token`\n## Fan-out (write diffusion)\n## [Link](x.md) here\n## Title\n"
        + "```\n# not a heading\n```\n";

    // Then their anchors are GitHub's
    assertThat(MarkdownLinks.anchors(md))
        .containsExactly("title", "binim-token", "fan-out-write-diffusion", "link-here", "title-1");
  }

  @Test
  void everyRelativeLinkInTheReadmeAndTheDocsResolves() throws IOException {
    // Given README.md and every Markdown file under docs/
    List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
    try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }

    // When each relative link is resolved against its page
    List<String> broken = new ArrayList<>();
    for (Path page : pages) {
      String text = Files.readString(page, StandardCharsets.UTF_8);
      for (MarkdownLinks.Link link : MarkdownLinks.relativeLinks(text)) {
        String problem = problem(page, text, link);
        if (problem != null) {
          broken.add(ROOT.relativize(page) + ":" + link.line() + ": " + link.target() + " (" + problem + ")");
        }
      }
    }

    // Then none is broken
    assertThat(broken).as("broken Markdown links").isEmpty();
  }

  private static String problem(Path page, String pageText, MarkdownLinks.Link link) throws IOException {
    Path target = link.path().isEmpty() ? page : page.getParent().resolve(link.path()).normalize();
    if (!target.startsWith(ROOT)) {
      return "points outside the repository";
    }
    if (!Files.exists(target)) {
      return "no such file";
    }
    if (link.anchor().isEmpty() || !target.toString().endsWith(".md")) {
      return null;
    }
    String text = target.equals(page) ? pageText : Files.readString(target, StandardCharsets.UTF_8);
    return MarkdownLinks.anchors(text).contains(link.anchor()) ? null : "no heading with that anchor";
  }
}
