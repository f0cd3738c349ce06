/**
 * Builds the web widget (`web/widget/` → `dist/web/widget.js`): one minified IIFE, Preact
 * bundled in, no eval, no runtime imports. `npm run build` runs it (so `npm ci` and `npm start`
 * do); `tsx scripts/build-widget.ts [out]`.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The widget's bytes, built from web/widget/main.tsx. */
export async function bundleWidget(): Promise<Uint8Array> {
  const result = await build({
    entryPoints: [path.join(root, 'web/widget/main.tsx')],
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  return result.outputFiles[0]!.contents;
}

/** Writes the bundle to `out` (through a temporary file, so a reader never sees half of it). */
export async function buildWidget(out = path.join(root, 'dist/web/widget.js')): Promise<string> {
  const bytes = await bundleWidget();
  await mkdir(path.dirname(out), { recursive: true });
  const temporary = `${out}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, out);
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildWidget(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
}
