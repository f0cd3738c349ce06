/** How the service reaches model providers over the network, read from the environment src/config.ts is given. */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { bool, ConfigError, int, str, type Env } from './config.parse.js';

/** The connections of model-provider calls (src/adapters/llm/model-dispatcher.ts). */
export interface LlmHttpConfig {
  /** LLM_HTTP2: offer HTTP/2 on TLS connections to providers (HTTP/1.1 when one does not pick it). */
  http2: boolean;
  /** LLM_HTTP2_MAX_STREAMS: replies one HTTP/2 connection carries at once (lowered to the provider's limit). */
  maxStreamsPerConnection: number;
  /** LLM_CA_FILE: certificates (PEM) trusted for providers on top of Node's roots (and NODE_EXTRA_CA_CERTS's). */
  ca: string | undefined;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A file of PEM certificates, read at start: every certificate in it must parse, and there must be one. */
function certificates(env: Env, name: string): string | undefined {
  const file = str(env, name);
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(name, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (!blocks.length) throw new ConfigError(name, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block);
    } catch {
      throw new ConfigError(name, `certificate ${index + 1} does not parse`);
    }
  });
  return blocks.join('\n');
}

/**
 * LLM_CA_FILE's certificates, with NODE_EXTRA_CA_CERTS's (Node adds those to its default roots,
 * which an explicit list of trusted certificates replaces).
 */
function caFile(env: Env): string | undefined {
  const own = certificates(env, 'LLM_CA_FILE');
  if (own === undefined) return undefined;
  const extra = certificates(env, 'NODE_EXTRA_CA_CERTS');
  return extra === undefined ? own : `${own}\n${extra}`;
}

export function llmHttpConfig(env: Env): LlmHttpConfig {
  return {
    http2: bool(env, 'LLM_HTTP2', false),
    maxStreamsPerConnection: int(env, 'LLM_HTTP2_MAX_STREAMS', 100, 1, 1000),
    ca: caFile(env),
  };
}
