package dev.impipe.notify.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.PrivateKey;

/**
 * The fields FCM HTTP v1 needs from a Firebase service-account JSON file (Firebase console, Project settings, Service
 * accounts, Generate new private key): {@code client_email}, {@code private_key} (PEM PKCS#8 RSA), {@code token_uri}
 * (used as is), {@code project_id}, and {@code private_key_id} when present.
 */
public record FcmCredentials(String clientEmail, PrivateKey privateKey, String privateKeyId, String tokenUri,
    String projectId) {

  /** Reads and checks the file; the message names the missing field, never a secret. */
  public static FcmCredentials load(Path file) {
    JsonNode json;
    try {
      json = new ObjectMapper().readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the FCM service-account file " + file, e);
    }
    return new FcmCredentials(required(json, "client_email", file),
        Pem.privateKey(required(json, "private_key", file), "RSA"),
        json.path("private_key_id").isTextual() ? json.path("private_key_id").asText() : null,
        required(json, "token_uri", file), required(json, "project_id", file));
  }

  private static String required(JsonNode json, String field, Path file) {
    JsonNode v = json.path(field);
    if (!v.isTextual() || v.asText().isBlank()) {
      throw new IllegalArgumentException("the FCM service-account file " + file + " has no " + field);
    }
    return v.asText();
  }
}
