/**
 * JSON Web Token verification: the keys are read and checked here, once, at
 * configuration (each with the algorithms it can verify: never `none`, never
 * an HMAC with a public key); `jose` (an optional peer dependency, loaded on
 * first use) verifies each token's signature and its `exp`, `nbf`, `iss` and
 * `aud`; the tenant claim is checked here.
 */
import { type KeyObject, createPublicKey, createSecretKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { importGatewayPeers } from '../peers.js';
import type { GuardJwtOptions } from './config.js';

/** Why a token was refused (the guard answers 401 with it). */
export class TokenError extends Error {}

interface VerificationKey {
  key: KeyObject;
  algorithms: string[];
  kid?: string;
}

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

/** True when `text` has the shape of a JWS compact token (three base64url parts, a JSON header). */
export function looksLikeJwt(text: string): boolean {
  const parts = text.split('.');
  return parts.length === 3 && parts.every((p) => SEGMENT.test(p)) && parts[0]!.startsWith('eyJ');
}

/** The part of `jose` used here. */
interface Jose {
  jwtVerify(
    token: string,
    key: (header: { alg?: string; kid?: string }) => KeyObject,
    options: {
      algorithms: string[];
      issuer?: string;
      audience?: string;
      clockTolerance: number;
      requiredClaims: string[];
    },
  ): Promise<{ payload: Record<string, unknown> }>;
}

let jose: Promise<Jose> | undefined;

/** Loads `jose` (once); rejects naming the install command when it is missing. */
export function loadJose(): Promise<Jose> {
  jose ??= importGatewayPeers(['jose'], 'JWT authentication (guard.jwt)').then(([m]) => m as Jose);
  return jose;
}

/** The key a token's header asks for: its algorithm allowed for that key, and its `kid` when both have one. */
function keyFor(keys: VerificationKey[], header: { alg?: string; kid?: string }): KeyObject {
  const alg = header.alg ?? '';
  const found = keys.find(
    (k) =>
      k.algorithms.includes(alg) && (header.kid === undefined || k.kid === undefined || k.kid === header.kid),
  );
  if (found === undefined) {
    throw new TokenError(
      `no key verifies algorithm ${alg || '(none)'}${header.kid === undefined ? '' : ` and kid ${header.kid}`}`,
    );
  }
  return found.key;
}

/** jose's error codes (and, for a claim, the claim) in the guard's words. */
function tokenProblem(err: { code?: string; claim?: string; message?: string }): string {
  switch (err.code) {
    case 'ERR_JWT_EXPIRED':
      return 'token has expired';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'token signature is invalid';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'token algorithm is not accepted';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (err.message?.includes('missing')) return `token has no ${err.claim} claim`;
      if (err.claim === 'nbf') return 'token is not valid yet (nbf)';
      if (err.claim === 'iss') return 'token issuer is not accepted';
      if (err.claim === 'aud') return 'token audience is not accepted';
      return `token ${err.claim} claim is not valid`;
    default:
      return `malformed token (${err.message ?? 'unreadable'})`;
  }
}

/** What a verified token says: its tenant and, when it has one, its id (`jti`, for revocation). */
export interface VerifiedToken {
  tenant: string;
  jti?: string;
}

/** Verifies a token's signature and claims; resolves with its tenant, or rejects with a TokenError. */
export async function verifyJwt(
  token: string,
  keys: VerificationKey[],
  options: GuardJwtOptions,
): Promise<VerifiedToken> {
  const { jwtVerify } = await loadJose();
  const algorithms = [...new Set(keys.flatMap((k) => k.algorithms))];
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, (header) => keyFor(keys, header), {
      algorithms,
      ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
      ...(options.audience === undefined ? {} : { audience: options.audience }),
      clockTolerance: options.clockToleranceSeconds ?? 5,
      requiredClaims: options.requireExpiry === false ? [] : ['exp'],
    }));
  } catch (err) {
    if (err instanceof TokenError) throw err;
    if (typeof (err as { code?: unknown }).code === 'string')
      throw new TokenError(tokenProblem(err as object));
    throw err;
  }
  const claim = options.tenantClaim ?? 'tenant';
  const tenant = payload[claim];
  if (typeof tenant !== 'string' || tenant === '')
    throw new TokenError(`token has no '${claim}' claim naming a tenant`);
  return typeof payload.jti === 'string' && payload.jti !== '' ? { tenant, jti: payload.jti } : { tenant };
}
