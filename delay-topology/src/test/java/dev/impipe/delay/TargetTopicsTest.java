package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.topics.TopicNames;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which target topics a schedule may name, and how a refusal reads. */
class TargetTopicsTest {

  private final TargetTopics anyExisting = new TargetTopics(DelayConfig.fromEnv(Map.of("IM_DELAY_TARGETS", "*")),
      TopicNames.withPrefix("im."), topic -> true);

  @Test
  void aTopicNameMayHave249CharactersAndALongerOneIsNamedAbbreviatedInTheRefusal() {
    assertThat(anyExisting.rejection("t".repeat(249))).isEmpty();
    assertThat(anyExisting.rejection("t".repeat(250)))
        .contains("target topic '" + "t".repeat(80) + "...' is not a valid topic name");
  }

  @Test
  void anIllegalNameOfUpTo80CharactersIsQuotedWhole() {
    String eighty = "x".repeat(79) + "!";
    assertThat(anyExisting.rejection(eighty)).contains("target topic '" + eighty + "' is not a valid topic name");
    assertThat(anyExisting.rejection("a b")).contains("target topic 'a b' is not a valid topic name");
  }

  @Test
  void aNameIsLegalExactlyWhenItHasOnlyLettersDigitsDotsUnderscoresAndDashes() {
    assertThat(TargetTopics.legalName("Az09._-zA")).isTrue();
    // the characters just outside each legal range, and a letter Kafka does not allow
    for (String bad : new String[] {"a/", "a:", "a@", "a[", "a`", "a{", "a,", "a ", "\u00e9", "a*"}) {
      assertThat(TargetTopics.legalName(bad)).as(bad).isFalse();
    }
  }
}
