package dev.impipe.notify.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.AlgorithmParameters;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * A local Web Push service for tests: hands out subscriptions (a P-256 key pair and an auth secret per device, as a
 * browser makes them), receives pushes on {@code /push/<id>}, checks the VAPID header and decrypts the RFC 8291
 * payload with its own JCA code (written from the RFC, independent of the module's encryption). Answers 201, or
 * what a test asked for a subscription (410, 429 with Retry-After).
 */
final class WebPushReceiver implements AutoCloseable {

  /** One push as received: the decrypted JSON (null when it did not decrypt) and why not. */
  record Push(String id, JsonNode payload, String error, Map<String, String> headers, long receivedAtMs) {}

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpServer server;
  private final Map<String, KeyPair> keys = new ConcurrentHashMap<>();
  private final Map<String, byte[]> auths = new ConcurrentHashMap<>();
  private final Map<String, Integer> answers = new ConcurrentHashMap<>();
  private final List<Push> received = new CopyOnWriteArrayList<>();

  WebPushReceiver() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/push/", exchange -> {
      String id = exchange.getRequestURI().getPath().substring("/push/".length());
      byte[] body = exchange.getRequestBody().readAllBytes();
      Map<String, String> headers = new ConcurrentHashMap<>();
      exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(java.util.Locale.ROOT), v.get(0)));
      Push push;
      try {
        checkVapid(headers.getOrDefault("authorization", ""));
        push = new Push(id, JSON.readTree(decrypt(id, body)), null, headers, System.currentTimeMillis());
      } catch (Exception e) {
        push = new Push(id, null, e.toString(), headers, System.currentTimeMillis());
      }
      received.add(push);
      int status = answers.getOrDefault(id, 201);
      if (status == 429) {
        exchange.getResponseHeaders().add("Retry-After", "1");
        answers.remove(id);
      }
      exchange.sendResponseHeaders(status, -1);
      exchange.close();
    });
    server.start();
  }

  /** The prefix to allow ({@code IM_NOTIFY_PUSH_ENDPOINTS}). */
  String prefix() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/push/";
  }

  /** A new subscription for {@code id}, as the JSON a browser's {@code PushSubscription.toJSON()} gives. */
  String subscribe(String id) throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair pair = g.generateKeyPair();
    byte[] auth = new byte[16];
    new SecureRandom().nextBytes(auth);
    keys.put(id, pair);
    auths.put(id, auth);
    return "{\"endpoint\":\"" + prefix() + id + "\",\"keys\":{\"p256dh\":\""
        + b64(point((ECPublicKey) pair.getPublic()))
        + "\",\"auth\":\"" + b64(auth) + "\"}}";
  }

  /** Answer {@code status} to pushes for {@code id} (429: once, with Retry-After: 1). */
  void answer(String id, int status) {
    answers.put(id, status);
  }

  List<Push> received(String id) {
    return received.stream().filter(p -> p.id().equals(id)).toList();
  }

  List<Push> all() {
    return List.copyOf(received);
  }

  @Override
  public void close() {
    server.stop(0);
  }

  /** RFC 8291 section 3.4 + RFC 8188: one record, padding delimiter 0x02. */
  private byte[] decrypt(String id, byte[] body) throws Exception {
    ByteBuffer in = ByteBuffer.wrap(body);
    byte[] salt = new byte[16];
    in.get(salt);
    in.getInt(); // record size
    byte[] asPublic = new byte[in.get() & 0xff];
    in.get(asPublic);
    byte[] ciphertext = new byte[in.remaining()];
    in.get(ciphertext);
    KeyPair ua = keys.get(id);
    KeyAgreement ka = KeyAgreement.getInstance("ECDH");
    ka.init(ua.getPrivate());
    ka.doPhase(publicKey(asPublic), true);
    byte[] ecdh = ka.generateSecret();
    byte[] keyInfo = concat("WebPush: info\0".getBytes(StandardCharsets.US_ASCII),
        point((ECPublicKey) ua.getPublic()), asPublic, new byte[] {1});
    byte[] ikm = hmac(hmac(auths.get(id), ecdh), keyInfo);
    byte[] prk = hmac(salt, ikm);
    byte[] cek = Arrays.copyOf(hmac(prk, "Content-Encoding: aes128gcm\0\1".getBytes(StandardCharsets.US_ASCII)), 16);
    byte[] nonce = Arrays.copyOf(hmac(prk, "Content-Encoding: nonce\0\1".getBytes(StandardCharsets.US_ASCII)), 12);
    Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
    c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(cek, "AES"), new GCMParameterSpec(128, nonce));
    byte[] padded = c.doFinal(ciphertext);
    int end = padded.length - 1;
    while (end >= 0 && padded[end] == 0) {
      end--;
    }
    if (end < 0 || padded[end] != 2) {
      throw new IllegalStateException("no final-record padding delimiter");
    }
    return Arrays.copyOf(padded, end);
  }

  /** RFC 8292: {@code vapid t=<JWT>, k=<key>}, the JWT signed with that key, aud = this origin, exp in the future. */
  private void checkVapid(String header) throws Exception {
    if (!header.startsWith("vapid ")) {
      throw new IllegalStateException("no vapid authorization: " + header);
    }
    String t = null;
    String k = null;
    for (String part : header.substring(6).split(",")) {
      String p = part.trim();
      if (p.startsWith("t=")) {
        t = p.substring(2);
      } else if (p.startsWith("k=")) {
        k = p.substring(2);
      }
    }
    String[] jwt = t.split("\\.");
    Signature verify = Signature.getInstance("SHA256withECDSAinP1363Format");
    verify.initVerify(publicKey(Base64.getUrlDecoder().decode(k)));
    verify.update((jwt[0] + "." + jwt[1]).getBytes(StandardCharsets.US_ASCII));
    if (!verify.verify(Base64.getUrlDecoder().decode(jwt[2]))) {
      throw new IllegalStateException("VAPID signature does not verify");
    }
    JsonNode claims = JSON.readTree(Base64.getUrlDecoder().decode(jwt[1]));
    String origin = "http://127.0.0.1:" + server.getAddress().getPort();
    if (!origin.equals(claims.path("aud").asText())) {
      throw new IllegalStateException("VAPID aud " + claims.path("aud") + " is not " + origin);
    }
    if (claims.path("exp").asLong() * 1000 < System.currentTimeMillis()) {
      throw new IllegalStateException("VAPID JWT expired");
    }
  }

  private static PublicKey publicKey(byte[] point) throws Exception {
    AlgorithmParameters params = AlgorithmParameters.getInstance("EC");
    params.init(new ECGenParameterSpec("secp256r1"));
    ECParameterSpec spec = params.getParameterSpec(ECParameterSpec.class);
    ECPoint w = new ECPoint(new BigInteger(1, Arrays.copyOfRange(point, 1, 33)),
        new BigInteger(1, Arrays.copyOfRange(point, 33, 65)));
    return KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(w, spec));
  }

  private static byte[] point(ECPublicKey key) {
    byte[] out = new byte[65];
    out[0] = 4;
    byte[] x = key.getW().getAffineX().toByteArray();
    byte[] y = key.getW().getAffineY().toByteArray();
    System.arraycopy(x, Math.max(0, x.length - 32), out, 1 + Math.max(0, 32 - x.length), Math.min(32, x.length));
    System.arraycopy(y, Math.max(0, y.length - 32), out, 33 + Math.max(0, 32 - y.length), Math.min(32, y.length));
    return out;
  }

  private static byte[] hmac(byte[] key, byte[] data) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(data);
  }

  private static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    ByteBuffer out = ByteBuffer.allocate(n);
    for (byte[] p : parts) {
      out.put(p);
    }
    return out.array();
  }

  private static String b64(byte[] bytes) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
