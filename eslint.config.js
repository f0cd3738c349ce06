// Lint with type-aware rules (floating promises, misused promises) over src, test and bench.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/** Adapters are created by the composition root only; everything else depends on a port. */
const ADAPTERS = {
  group: ['**/adapters/**'],
  message: 'Only container.ts and other adapters import adapters; depend on a port.',
};
/** Vendor SDKs (models, mail, outbound HTTP, cache) are used only in src/adapters/. */
const VENDOR_SDKS = {
  group: ['ai', '@ai-sdk/*', 'nodemailer', 'undici', '@huggingface/transformers', 'ioredis'],
  message: 'Vendor SDKs are used only in src/adapters/; depend on a port.',
};
/** From outside src/modules: a module is reached through its index.ts. */
const MODULE_INSIDES = {
  regex: '(^|/)modules/[^/]+/(?!index\\.js$)[^/]+$',
  message: "Reach a module through its index.ts (add what you need to the module's surface).",
};
/** From inside a module: another module is reached through its index.ts. */
const SIBLING_MODULE_INSIDES = {
  regex: '^\\.\\./(?!\\.)[^/]+/(?!index\\.js$)[^/]+$',
  message: "Reach another module through its index.ts (add what you need to that module's surface).",
};
/** The kernel imports no module. */
const MODULES = {
  group: ['**/modules/**'],
  message: 'The kernel imports no module; move the shared piece into the kernel.',
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', 'bin/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // STYLE.md's budget: a source file past 500 lines splits along its seams.
    files: ['src/**/*.ts', 'bench/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 500 }] },
  },
  {
    // STYLE.md: config.ts is the only reader of the environment.
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read settings through src/config.ts.' },
      ],
    },
  },
  // Boundaries (docs/architecture.md). ESLint keeps the last matching setting of a rule, so each
  // area's setting lists every pattern that applies to it.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [ADAPTERS, VENDOR_SDKS, MODULE_INSIDES] }] },
  },
  {
    files: ['src/modules/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [ADAPTERS, VENDOR_SDKS, SIBLING_MODULE_INSIDES] }] },
  },
  {
    // The kernel imports no module (src/db/schema.ts assembles the modules' table types, type-only).
    files: ['src/db/**/*.ts', 'src/http/**/*.ts', 'src/jobs/**/*.ts', 'src/lib/**/*.ts', 'src/ports/**/*.ts'],
    ignores: ['src/db/schema.ts', 'src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [ADAPTERS, VENDOR_SDKS, MODULES] }] },
  },
  {
    // schema.ts assembles the Database type from each module's <module>.tables.ts, and nothing else.
    files: ['src/db/schema.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ADAPTERS,
            VENDOR_SDKS,
            {
              regex: '(^|/)modules/[^/]+/(?![^/]+\\.tables\\.js$)[^/]+$',
              message: "schema.ts imports only the modules' table declarations.",
            },
          ],
        },
      ],
    },
  },
  {
    // The composition root creates adapters; adapters may share pieces with each other.
    files: ['src/container.ts', 'src/adapters/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [MODULE_INSIDES] }] },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
