package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** RFC 8291 Appendix A: the RFC's own keys, salt and plaintext give the RFC's own bytes. */
class WebPushEncryptionTest {

  static final String PLAINTEXT = "When I grow up, I want to be a watermelon";
  static final String AS_PRIVATE = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
  static final String AS_PUBLIC =
      "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
  static final String UA_PRIVATE = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
  static final String UA_PUBLIC =
      "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
  static final String SALT = "DGv6ra1nlYgDCS1FRnbzlw";
  static final String AUTH = "BTBZMqHH6r4Tts7J_aSIgg";
  static final String MESSAGE =
      "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";

  static byte[] b64(String s) {
    return Base64.getUrlDecoder().decode(s);
  }

  @Test
  void theRfcTestVectorEncryptsToTheRfcBytes() {
    // Given the application server's key pair, the user agent's public key, auth secret and salt of RFC 8291 A
    ECPrivateKey asPrivate = EcKeys.privateKey(b64(AS_PRIVATE));
    ECPublicKey asPublic = EcKeys.publicKey(b64(AS_PUBLIC));

    // When the plaintext is encrypted
    byte[] message = WebPushEncryption.encrypt(PLAINTEXT.getBytes(StandardCharsets.UTF_8), b64(UA_PUBLIC),
        b64(AUTH), asPrivate, asPublic, b64(SALT));

    // Then it is exactly the RFC's message: salt, rs 4096, idlen 65, keyid, one record with delimiter 0x02
    assertThat(Base64.getUrlEncoder().withoutPadding().encodeToString(message)).isEqualTo(MESSAGE);
  }

  @Test
  void thePublicKeyIsDerivedFromThePrivateScalar() {
    // Given the RFC's private keys, Then their derived public keys are the RFC's public keys
    assertThat(EcKeys.uncompressed(EcKeys.publicKeyOf(EcKeys.privateKey(b64(AS_PRIVATE))))).isEqualTo(b64(AS_PUBLIC));
    assertThat(EcKeys.uncompressed(EcKeys.publicKeyOf(EcKeys.privateKey(b64(UA_PRIVATE))))).isEqualTo(b64(UA_PUBLIC));
  }

  @Test
  void aFreshMessageDecryptsWithTheUserAgentsKey() throws Exception {
    // Given a message encrypted with a random ephemeral key and salt
    byte[] plaintext = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);
    byte[] message = WebPushEncryption.encrypt(plaintext, b64(UA_PUBLIC), b64(AUTH));

    // When the user agent derives the keys from the header (RFC 8291 section 3.4, receiving side)
    byte[] salt = Arrays.copyOfRange(message, 0, 16);
    assertThat(message[20]).isEqualTo((byte) 65);
    byte[] asPublic = Arrays.copyOfRange(message, 21, 86);
    KeyAgreement agreement = KeyAgreement.getInstance("ECDH");
    agreement.init(EcKeys.privateKey(b64(UA_PRIVATE)));
    agreement.doPhase(EcKeys.publicKey(asPublic), true);
    byte[] info = concat("WebPush: info\0".getBytes(StandardCharsets.US_ASCII), b64(UA_PUBLIC), asPublic);
    byte[] ikm = Arrays.copyOf(WebPushEncryption.hmac(WebPushEncryption.hmac(b64(AUTH), agreement.generateSecret()),
        concat(info, new byte[] {1})), 32);
    byte[] prk = WebPushEncryption.hmac(salt, ikm);
    byte[] cek = Arrays.copyOf(WebPushEncryption.hmac(prk,
        concat("Content-Encoding: aes128gcm\0".getBytes(StandardCharsets.US_ASCII), new byte[] {1})), 16);
    byte[] nonce = Arrays.copyOf(WebPushEncryption.hmac(prk,
        concat("Content-Encoding: nonce\0".getBytes(StandardCharsets.US_ASCII), new byte[] {1})), 12);
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    cipher.init(Cipher.DECRYPT_MODE, new SecretKeySpec(cek, "AES"), new GCMParameterSpec(128, nonce));
    byte[] padded = cipher.doFinal(message, 86, message.length - 86);

    // Then it is the plaintext followed by the last-record delimiter
    assertThat(Arrays.copyOf(padded, padded.length - 1)).isEqualTo(plaintext);
    assertThat(padded[padded.length - 1]).isEqualTo((byte) 2);
    assertThat(Arrays.copyOfRange(message, 16, 20)).containsExactly(0, 0, 0x10, 0);
  }

  @Test
  void aPayloadLargerThanOneRecordIsRefused() {
    assertThatThrownBy(() -> WebPushEncryption.encrypt(new byte[WebPushEncryption.MAX_PLAINTEXT + 1], b64(UA_PUBLIC),
        b64(AUTH))).isInstanceOf(IllegalArgumentException.class);
    assertThat(WebPushEncryption.encrypt(new byte[WebPushEncryption.MAX_PLAINTEXT], b64(UA_PUBLIC), b64(AUTH)))
        .hasSize(86 + WebPushEncryption.MAX_PLAINTEXT + 17);
  }

  private static byte[] concat(byte[]... parts) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }
}
