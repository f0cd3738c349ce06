// The console's build: Preact through Vite (JSX by Vite's own transform), served by the service at
// /console from dist/web/console (src/http/console.ts). No inline script or style, no data: URL,
// so the strict Content-Security-Policy holds. Two pages: the console (index.html) and the
// widget preview it frames (preview.html).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.resolve(here, '../../dist/web/console'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    rollupOptions: {
      input: { console: path.resolve(here, 'index.html'), preview: path.resolve(here, 'preview.html') },
    },
  },
});
