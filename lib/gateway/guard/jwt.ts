/**
 * JSON Web Token verification, synchronous with node:crypto: `Guard.admit()`
 * is synchronous by the gateway's contract (parts of the gateway call it
 * inline), while `jose` verifies through WebCrypto, which only answers with
 * a Promise. The checks are the JWS compact form, the algorithm allowed for
 * the key (never `none`, never an HMAC with a public key), the signature,
 * then `exp`, `nbf`, `iss`, `aud` and the tenant claim.
 */
import {
  constants,
  type KeyObject,
  createHmac,
  createPublicKey,
  createSecretKey,
  timingSafeEqual,
  verify,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { GuardJwtOptions } from './config.js';

/** Why a token was refused (the guard answers 401 with it). */
export class TokenError extends Error {}

interface VerificationKey {
  key: KeyObject;
  algorithms: string[];
  kid?: string;
}

const HASH: Record<string, string> = { '256': 'sha256', '384': 'sha384', '512': 'sha512' };
const EC_ALG: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** The algorithms a key can verify. */
function algorithmsOf(key: KeyObject): string[] {
  if (key.type === 'secret') return ['HS256', 'HS384', 'HS512'];
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    case 'rsa-pss':
      return ['PS256', 'PS384', 'PS512'];
    case 'ec': {
      const alg = EC_ALG[key.asymmetricKeyDetails?.namedCurve ?? ''];
      return alg === undefined ? [] : [alg];
    }
    case 'ed25519':
    case 'ed448':
      return ['EdDSA'];
    default:
      return [];
  }
}

function readText(pathOrText: string, what: string): string {
  if (pathOrText.includes('-----BEGIN')) return pathOrText;
  try {
    return readFileSync(pathOrText, 'utf8');
  } catch (err) {
    throw new TypeError(`${what}: cannot read '${pathOrText}': ${(err as NodeJS.ErrnoException).code}`);
  }
}

/** The verification keys the options name (read once, at configuration). */
export function loadKeys(options: GuardJwtOptions): VerificationKey[] {
  const restrict = (algs: string[]) =>
    options.algorithms === undefined ? algs : algs.filter((a) => options.algorithms!.includes(a));
  if (options.secret !== undefined) {
    const key = createSecretKey(Buffer.from(options.secret));
    return [{ key, algorithms: restrict(algorithmsOf(key)) }];
  }
  if (options.publicKey !== undefined) {
    let key: KeyObject;
    try {
      key = createPublicKey(readText(options.publicKey, 'guard.jwt.publicKey'));
    } catch (err) {
      if (err instanceof TypeError && err.message.startsWith('guard.')) throw err;
      throw new TypeError(`guard.jwt.publicKey: not a PEM public key (${(err as Error).message})`);
    }
    return [{ key, algorithms: restrict(algorithmsOf(key)) }];
  }
  return loadJwks(options.jwksFile!, restrict);
}

function loadJwks(file: string, restrict: (algs: string[]) => string[]): VerificationKey[] {
  let set: { keys?: unknown };
  try {
    set = JSON.parse(readText(file, 'guard.jwt.jwksFile'));
  } catch (err) {
    if (err instanceof TypeError) throw err;
    throw new TypeError(`guard.jwt.jwksFile: '${file}' is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(set?.keys) || set.keys.length === 0)
    throw new TypeError(`guard.jwt.jwksFile: '${file}' holds no "keys" array`);
  return set.keys.map((jwk: Record<string, unknown>, i: number) => {
    if (jwk.d !== undefined || jwk.kty === 'oct')
      throw new TypeError(`guard.jwt.jwksFile: keys[${i}] is a private or secret key; give public keys only`);
    let key: KeyObject;
    try {
      key = createPublicKey({ key: jwk as never, format: 'jwk' });
    } catch (err) {
      throw new TypeError(`guard.jwt.jwksFile: keys[${i}] is not a usable JWK (${(err as Error).message})`);
    }
    let algorithms = restrict(algorithmsOf(key));
    if (typeof jwk.alg === 'string') algorithms = algorithms.filter((a) => a === jwk.alg);
    return { key, algorithms, ...(typeof jwk.kid === 'string' ? { kid: jwk.kid } : {}) };
  });
}

const SEGMENT = /^[A-Za-z0-9_-]*$/;

function decodeSegment(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new TokenError(`malformed token: its ${what} is not base64url JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TokenError(`malformed token: its ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** True when `text` has the shape of a JWS compact token (three base64url parts, a JSON header). */
export function looksLikeJwt(text: string): boolean {
  const parts = text.split('.');
  return parts.length === 3 && parts.every((p) => SEGMENT.test(p)) && parts[0]!.startsWith('eyJ');
}

function signatureValid(alg: string, key: KeyObject, data: Buffer, signature: Buffer): boolean {
  const hash = HASH[alg.slice(2)];
  if (alg.startsWith('HS')) {
    const mac = createHmac(hash!, key).update(data).digest();
    return mac.length === signature.length && timingSafeEqual(mac, signature);
  }
  if (alg === 'EdDSA') return verify(null, data, key, signature);
  if (alg.startsWith('RS')) return verify(hash!, data, key, signature);
  if (alg.startsWith('PS')) {
    return verify(
      hash!,
      data,
      { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST },
      signature,
    );
  }
  if (alg.startsWith('ES')) return verify(hash!, data, { key, dsaEncoding: 'ieee-p1363' }, signature);
  return false;
}

/** Verifies a token's signature and claims; returns its tenant, or throws a TokenError. */
export function verifyJwt(
  token: string,
  keys: VerificationKey[],
  options: GuardJwtOptions,
  nowMs = Date.now(),
): string {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p)))
    throw new TokenError('malformed token: expected three base64url parts');
  const header = decodeSegment(parts[0]!, 'header');
  const payload = decodeSegment(parts[1]!, 'payload');
  const alg = header.alg;
  if (typeof alg !== 'string' || alg === 'none') throw new TokenError('token algorithm is missing or none');
  const candidates = keys.filter(
    (k) =>
      k.algorithms.includes(alg) && (header.kid === undefined || k.kid === undefined || k.kid === header.kid),
  );
  if (candidates.length === 0)
    throw new TokenError(
      `no key verifies algorithm ${alg}${header.kid === undefined ? '' : ` and kid ${String(header.kid)}`}`,
    );
  const data = Buffer.from(`${parts[0]}.${parts[1]}`);
  const signature = Buffer.from(parts[2]!, 'base64url');
  let valid = false;
  for (const k of candidates) {
    try {
      if (signatureValid(alg, k.key, data, signature)) valid = true;
    } catch {
      // A signature of the wrong size for the key: invalid, as any other.
    }
    if (valid) break;
  }
  if (!valid) throw new TokenError('token signature is invalid');
  return checkClaims(payload, options, nowMs / 1000);
}

function checkClaims(payload: Record<string, unknown>, options: GuardJwtOptions, now: number): string {
  const tolerance = options.clockToleranceSeconds ?? 5;
  const { exp, nbf, iss, aud } = payload;
  if (exp === undefined) {
    if (options.requireExpiry !== false) throw new TokenError('token has no exp claim');
  } else if (typeof exp !== 'number') throw new TokenError('token exp claim is not a number');
  else if (now - tolerance >= exp) throw new TokenError('token has expired');
  if (nbf !== undefined && (typeof nbf !== 'number' || now + tolerance < nbf))
    throw new TokenError('token is not valid yet (nbf)');
  if (options.issuer !== undefined && iss !== options.issuer)
    throw new TokenError('token issuer is not accepted');
  if (options.audience !== undefined) {
    const list = Array.isArray(aud) ? aud : [aud];
    if (!list.includes(options.audience)) throw new TokenError('token audience is not accepted');
  }
  const tenant = payload[options.tenantClaim ?? 'tenant'];
  if (typeof tenant !== 'string' || tenant === '')
    throw new TokenError(`token has no '${options.tenantClaim ?? 'tenant'}' claim naming a tenant`);
  return tenant;
}
