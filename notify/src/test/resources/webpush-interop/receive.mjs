// Decrypts one Web Push message and checks its VAPID header with libraries independent of the sender's code.
// argv: uaPrivate (base64url scalar), authSecret (base64url), bodyFile, authorization header, expected audience
import crypto from 'node:crypto';
import fs from 'node:fs';
import ece from 'http_ece';
import { jwtVerify, importJWK } from 'jose';

const [uaPrivate, auth, bodyFile, authorization, audience] = process.argv.slice(2);
const out = {};
try {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(uaPrivate, 'base64url'));
  out.plaintext = ece.decrypt(fs.readFileSync(bodyFile), { version: 'aes128gcm', privateKey: ecdh, authSecret: auth })
    .toString('utf8');
} catch (e) { out.decryptError = String(e.message || e); }
try {
  const m = /^vapid\s+t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization);
  if (!m) throw new Error('not a vapid header: ' + authorization);
  const raw = Buffer.from(m[2], 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
  const jwk = { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url') };
  const { payload, protectedHeader } = await jwtVerify(m[1], await importJWK(jwk, 'ES256'), { audience, algorithms: ['ES256'] });
  out.vapid = { ok: true, alg: protectedHeader.alg, sub: payload.sub, aud: payload.aud, expIn: payload.exp - Date.now() / 1000 };
} catch (e) { out.vapid = { ok: false, why: String(e.code || e.message || e) }; }
console.log(JSON.stringify(out));
