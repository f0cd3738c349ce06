/**
 * The model client alone against the AI SDK's OpenAI chat model (`@ai-sdk/openai`, the path the
 * service streamed through before), in one process, in the same run, against the same provider:
 *
 *   npx tsx bench/chat/model-client.ts [--samples 300] [--tokens 50] [--streams 2000]
 *
 * The fake OpenAI chat-completions server of the tests runs in a process of its own.
 * 1. Time: first token and whole reply (`--tokens` tokens sent in one burst), the two arms
 *    alternated request by request; p50/p95 of each and the ratio client / AI SDK.
 * 2. Memory held per open stream: `--streams` streams opened at once, each read to its first token
 *    and then held by the provider; V8 heap used (after a full GC) and RSS, before and while they
 *    are held, divided by the streams. The arms run one after the other, each from a settled heap;
 *    their streams are then aborted and the connections closed.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createOpenAI } from '@ai-sdk/openai';
import { createLlmClient } from '../../src/adapters/llm/llm-client.js';
import type { LlmStreamPart } from '../../src/ports/llm.js';
import { percentile, startFakeProviderProcess } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '300' },
    tokens: { type: 'string', default: '50' },
    streams: { type: 'string', default: '2000' },
  },
});
const samples = Number(values.samples);
const tokenCount = Number(values.tokens);
const streamCount = Number(values.streams);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

type Arm = (signal: AbortSignal, onPart: (part: LlmStreamPart) => void) => Promise<void>;

const peer = await startFakeProviderProcess();
try {
  const messages = [{ role: 'user' as const, content: 'hello' }];
  const client = createLlmClient({
    providers: [{ name: 'fake', type: 'openai', apiKey: 'sk-bench', baseUrl: peer.url, models: [] }],
  });
  const viaClient: Arm = async (signal, onPart) => {
    for await (const part of client.stream({ model: 'fake:gpt-bench', messages, temperature: 0, signal })) onPart(part);
  };
  const sdkModel = createOpenAI({ apiKey: 'sk-bench', baseURL: peer.url }).chat('gpt-bench');
  const viaSdk: Arm = async (signal, onPart) => {
    const { stream } = await sdkModel.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
      temperature: 0,
      abortSignal: signal,
    });
    try {
      for await (const part of stream) if (part.type === 'text-delta' && part.delta) onPart(part.delta);
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  };
  const arms: [string, Arm][] = [
    ['model client', viaClient],
    ['AI SDK (@ai-sdk/openai chat)', viaSdk],
  ];

  console.log(`load average before: ${load()} on ${os.cpus().length} cores`);

  // 1. Time.
  await peer.script({ tokens: Array.from({ length: tokenCount }, (_, i) => ` t${i}`) });
  const timeOne = async (arm: Arm) => {
    const t0 = performance.now();
    let first = -1;
    let parts = 0;
    await arm(new AbortController().signal, () => {
      if (first < 0) first = performance.now() - t0;
      parts += 1;
    });
    if (parts !== tokenCount) throw new Error(`a reply lost tokens: ${parts} of ${tokenCount}`);
    return { first, whole: performance.now() - t0 };
  };
  const timings = arms.map(() => ({ first: [] as number[], whole: [] as number[] }));
  for (let i = 0; i < 30; i++) for (const [, arm] of arms) await timeOne(arm);
  for (let i = 0; i < samples; i++)
    for (const [index, [, arm]] of arms.entries()) {
      const { first, whole } = await timeOne(arm);
      timings[index]!.first.push(first);
      timings[index]!.whole.push(whole);
    }
  const p = (list: number[], q: number) =>
    percentile(
      [...list].sort((a, b) => a - b),
      q,
    );
  console.log(`\n${samples} replies of ${tokenCount} tokens per arm, alternated`);
  for (const [index, [name]] of arms.entries()) {
    const t = timings[index]!;
    console.log(
      `${name.padEnd(30)} first token p50 ${p(t.first, 50).toFixed(2)} / p95 ${p(t.first, 95).toFixed(2)} ms   whole reply p50 ${p(t.whole, 50).toFixed(2)} / p95 ${p(t.whole, 95).toFixed(2)} ms`,
    );
  }
  const [ours, theirs] = timings;
  console.log(
    `ratio client / AI SDK (p50): first token ${(p(ours!.first, 50) / p(theirs!.first, 50)).toFixed(2)}, whole reply ${(p(ours!.whole, 50) / p(theirs!.whole, 50)).toFixed(2)}`,
  );

  // 2. Memory per open stream.
  await peer.script({ tokens: ['first', 'never'], hangAfter: 1 });
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      gc();
    }
    return { heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss };
  };
  console.log(`\n${streamCount} streams held open per arm (heap after a full GC)`);
  for (const [name, arm] of arms) {
    const before = await settle();
    const controllers: AbortController[] = [];
    const firsts: Promise<void>[] = [];
    const ends: Promise<void>[] = [];
    for (let i = 0; i < streamCount; i++) {
      const controller = new AbortController();
      controllers.push(controller);
      let seen!: () => void;
      firsts.push(new Promise<void>((resolve) => (seen = resolve)));
      ends.push(arm(controller.signal, seen));
    }
    await Promise.all(firsts);
    const held = await settle();
    const perHeap = (held.heap - before.heap) / streamCount / 1024;
    const perRss = (held.rss - before.rss) / streamCount / 1024;
    console.log(
      `${name.padEnd(30)} heap ${(before.heap / 2 ** 20).toFixed(1)} → ${(held.heap / 2 ** 20).toFixed(1)} MiB: ${perHeap.toFixed(1)} KiB per stream; RSS ${(before.rss / 2 ** 20).toFixed(1)} → ${(held.rss / 2 ** 20).toFixed(1)} MiB: ${perRss.toFixed(1)} KiB per stream`,
    );
    for (const controller of controllers) controller.abort();
    await Promise.all(ends);
    // The sockets closed and the pools emptied before the next arm measures its baseline.
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  console.log(`\nload average after: ${load()}`);
} finally {
  await peer.close();
}
