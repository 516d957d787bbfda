package dev.impipe.edge.auth;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TokenVerifierTest {

  @Test
  void theBearerTokenIsTakenFromTheAuthorizationHeader() throws Exception {
    String token = TestTokens.token("alice");

    assertThat(TokenVerifier.bearerToken("Bearer " + token)).hasValue(token);
    assertThat(TokenVerifier.bearerToken("bearer   " + token + " ")).hasValue(token);
    assertThat(TestTokens.verifier().verify(TokenVerifier.bearerToken(TestTokens.bearer("bob")).orElseThrow())
        .userId()).isEqualTo("bob");
  }

  @Test
  void noHeaderAnotherSchemeOrAnEmptyTokenGiveNothing() {
    assertThat(TokenVerifier.bearerToken(null)).isEmpty();
    assertThat(TokenVerifier.bearerToken("")).isEmpty();
    assertThat(TokenVerifier.bearerToken("Bearer ")).isEmpty();
    assertThat(TokenVerifier.bearerToken("Bearer    ")).isEmpty();
    assertThat(TokenVerifier.bearerToken("Basic YWxpY2U6c2VjcmV0")).isEmpty();
    assertThat(TokenVerifier.bearerToken("Bearertoken")).isEmpty();
  }
}
