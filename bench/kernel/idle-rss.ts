/**
 * Idle RSS of the service: started in its own process on a fresh database (workers on, no
 * embedder, the defaults otherwise), left idle, then its resident set read from /proc and its
 * heap from /metrics. With `--modules FILE`, the packages the process loaded are written there
 * (what a process pays for at start).
 *
 *   npx tsx bench/kernel/idle-rss.ts [--idle 5] [--modules /tmp/modules.txt] [--dist]
 *
 * `--dist` runs the built service (`node dist/main.js`, as `npm start` does) instead of the
 * sources through tsx (whose compiler adds its own tens of MiB).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { benchDatabase, benchPort, LIFTED_RATE_LIMITS, ROOT } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    idle: { type: 'string', default: '5' },
    modules: { type: 'string' },
    dist: { type: 'boolean', default: false },
  },
});

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

async function main() {
  const database = await benchDatabase();
  const port = benchPort();
  const hooks: string[] = [];
  if (values.modules) {
    writeFileSync(values.modules, '');
    const hook = `
      export async function resolve(specifier, context, next) {
        const result = await next(specifier, context);
        const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(result.url);
        if (m && !(globalThis.seen ??= new Set()).has(m[1])) {
          globalThis.seen.add(m[1]);
          (await import('node:fs')).appendFileSync(${JSON.stringify(values.modules)}, m[1] + '\\n');
        }
        return result;
      }`;
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
    hooks.push('--import', `data:text/javascript,${encodeURIComponent(register)}`);
  }
  const args = values.dist ? [...hooks, 'dist/main.js'] : [...hooks, '--import', 'tsx', 'src/main.ts'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DATABASE_URL: database.url,
      EMBEDDINGS_PROVIDER: 'none',
      ...LIFTED_RATE_LIMITS,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const closed = new Promise((resolve) => child.on('close', resolve));
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 1200; i++) {
      if (
        await fetch(`${base}/readyz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ready = rssOf(child.pid!);
    await new Promise((resolve) => setTimeout(resolve, Number(values.idle) * 1000));
    const metrics = await fetch(`${base}/metrics`).then((r) => r.text());
    const read = (name: string) =>
      Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN) / 2 ** 20;
    console.log(
      `${values.dist ? 'node dist/main.js' : 'tsx src/main.ts'}: RSS at ready ${ready.toFixed(0)} MiB, after ${values.idle} s idle ${rssOf(child.pid!).toFixed(0)} MiB`,
    );
    console.log(
      `heap used ${read('switchboard_nodejs_heap_size_used_bytes').toFixed(0)} MiB of ${read('switchboard_nodejs_heap_size_total_bytes').toFixed(0)} MiB; external ${read('switchboard_nodejs_external_memory_bytes').toFixed(0)} MiB`,
    );
    if (values.modules)
      console.log(
        `packages loaded: ${readFileSync(values.modules, 'utf8').trim().split('\n').length} (in ${values.modules})`,
      );
  } finally {
    child.kill('SIGTERM');
    await closed;
    await database.drop();
  }
}

await main();
