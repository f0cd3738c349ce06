/**
 * A local server that speaks the OpenAI embeddings protocol (`POST /v1/embeddings`). Its vectors
 * are bags of concepts: words are mapped to a concept (a small synonym table, else the word
 * itself) and hashed into 64 dimensions, so that "car" and "automobile" land close together
 * while sharing no letters — something only the vector lane can find.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const CONCEPTS: Record<string, string> = {
  car: 'vehicle',
  cars: 'vehicle',
  automobile: 'vehicle',
  automobiles: 'vehicle',
  vehicle: 'vehicle',
  repair: 'fix',
  repairs: 'fix',
  service: 'fix',
  servicing: 'fix',
  maintenance: 'fix',
  fix: 'fix',
  cost: 'price',
  price: 'price',
  fee: 'price',
  fees: 'price',
  charge: 'price',
};

export function conceptVector(text: string, dims = 64): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const concept = CONCEPTS[word] ?? word;
    let hash = 2166136261;
    for (const char of concept) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
    vector[Math.abs(hash) % dims]! += 1;
  }
  return vector;
}

export interface EmbeddingsPeer {
  url: string;
  requests: { model: string; inputs: number; authorization: string | undefined }[];
  /** Next responses fail with this status (0: answer normally). */
  failWith: number;
  close(): Promise<void>;
}

async function body(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startEmbeddingsPeer(): Promise<EmbeddingsPeer> {
  const peer: Omit<EmbeddingsPeer, 'url' | 'close'> = { requests: [], failWith: 0 };
  const server: Server = createServer(async (request, response) => {
    const payload = JSON.parse(await body(request)) as { model: string; input: string | string[] };
    const inputs = Array.isArray(payload.input) ? payload.input : [payload.input];
    peer.requests.push({ model: payload.model, inputs: inputs.length, authorization: request.headers.authorization });
    if (request.url !== '/v1/embeddings') {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'Not found' } }));
      return;
    }
    if (peer.failWith) {
      response
        .writeHead(peer.failWith, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'The server is overloaded', type: 'server_error' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        object: 'list',
        model: payload.model,
        data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: conceptVector(input) })),
        usage: { prompt_tokens: 0, total_tokens: 0 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return Object.assign(peer, {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as EmbeddingsPeer;
}
