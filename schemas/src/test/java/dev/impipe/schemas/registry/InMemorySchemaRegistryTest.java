package dev.impipe.schemas.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class InMemorySchemaRegistryTest {

  private static final String SCOPE = "mock://in-memory-registry-test";

  @AfterEach
  void drop() {
    InMemorySchemaRegistry.drop(SCOPE);
  }

  @Test
  void sameSchemaSameIdDifferentSchemaDifferentId() {
    InMemorySchemaRegistry registry = InMemorySchemaRegistry.forScope(SCOPE);

    int chat = registry.register("a-value", ChatMessage.getClassSchema());
    int again = registry.register("b-value", ChatMessage.getClassSchema());
    int inbox = registry.register("a-value", InboxEntry.getClassSchema());

    assertThat(again).isEqualTo(chat);
    assertThat(inbox).isNotEqualTo(chat);
    assertThat(registry.getById(chat)).isEqualTo(ChatMessage.getClassSchema());
    assertThat(registry.getById(inbox)).isEqualTo(InboxEntry.getClassSchema());
  }

  @Test
  void aScopeIsSharedUntilDropped() {
    int id = InMemorySchemaRegistry.forScope(SCOPE).register("t-value", ChatMessage.getClassSchema());

    assertThat(SchemaRegistryClients.forUrl(SCOPE).getById(id)).isEqualTo(ChatMessage.getClassSchema());

    InMemorySchemaRegistry.drop(SCOPE);
    assertThatThrownBy(() -> InMemorySchemaRegistry.forScope(SCOPE).getById(id))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("Schema id " + id)
        .hasMessageContaining(SCOPE);
  }
}
