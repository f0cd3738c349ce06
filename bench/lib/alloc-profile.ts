/**
 * Reading a sampling heap profile (bench/lib/heap-sampler.mjs) as allocation per unit of work:
 * the total, by package, and by the nearest frame of the service's own code (everything a
 * library allocated below one of our functions counted to that function). Samples taken after an
 * `await` have only the stack since it resumed: those whose stack holds none of our frames are
 * counted under "(no frame of ours)" — mostly Node's sockets and HTTP, pg's protocol, timers.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** A frame of the service's own code (the build's or the sources'), not a dependency's. */
const isOwn = (url: string) => /\/(dist|src)\//.test(url) && !url.includes('/node_modules/');

function frameName(frame: ProfileNode['callFrame']): string {
  const file = frame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(dist|src)\//, '$1/');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

function packageOf(url: string): string {
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  if (isOwn(url)) return '(the service)';
  if (url.startsWith('node:')) return url.split('/')[0]!;
  return url ? url : '(V8 and native)';
}

/** Lines describing the profile in `file` per `units` (turns): KiB each, the `top` largest of each table. */
export function allocationSummary(file: string, units: number, top = 12): string[] {
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: ProfileNode };
  let total = 0;
  const packages = new Map<string, number>();
  const ours = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, size: number) => map.set(key, (map.get(key) ?? 0) + size);
  const stack: [ProfileNode, string | null][] = [[head, null]];
  while (stack.length) {
    const [node, nearest] = stack.pop()!;
    const here = isOwn(node.callFrame.url) ? frameName(node.callFrame) : nearest;
    if (node.selfSize) {
      total += node.selfSize;
      add(packages, packageOf(node.callFrame.url), node.selfSize);
      add(ours, here ?? '(no frame of ours)', node.selfSize);
    }
    for (const child of node.children) stack.push([child, here]);
  }
  const kib = (bytes: number) => `${(bytes / 1024 / units).toFixed(1).padStart(7)} KiB`;
  const table = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, bytes]) => `  ${kib(bytes)}  ${name}`);
  return [
    `allocated: ${(total / 1024 / units).toFixed(1)} KiB per turn (${(total / 2 ** 20).toFixed(1)} MiB over ${units}; objects collected since included)`,
    'by package:',
    ...table(packages),
    'by the nearest function of ours (libraries below it included):',
    ...table(ours),
  ];
}
