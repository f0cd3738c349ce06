// Lint with type-aware rules (floating promises, misused promises) over src, test and bench.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

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
  {
    // Vendor SDKs (models, mail, outbound HTTP) only in adapters; the rest depends on ports.
    files: ['src/**/*.ts'],
    ignores: ['src/adapters/**', 'src/container.ts', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/adapters/**'],
              message: 'Only container.ts and other adapters import adapters; depend on a port.',
            },
            {
              group: ['ai', '@ai-sdk/*', 'nodemailer', 'undici', '@huggingface/transformers', 'ioredis'],
              message: 'Vendor SDKs are used only in src/adapters/; depend on a port.',
            },
          ],
        },
      ],
    },
  },
  {
    // The kernel imports no module (src/db/schema.ts assembles the modules' table types, type-only).
    files: ['src/db/**/*.ts', 'src/http/**/*.ts', 'src/jobs/**/*.ts', 'src/lib/**/*.ts', 'src/ports/**/*.ts'],
    ignores: ['src/db/schema.ts', 'src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/modules/**'],
              message: 'The kernel imports no module; move the shared piece into the kernel.',
            },
            { group: ['**/adapters/**'], message: 'The kernel depends on ports, not adapters.' },
            {
              group: ['ai', '@ai-sdk/*', 'nodemailer', 'undici', '@huggingface/transformers', 'ioredis'],
              message: 'Vendor SDKs are used only in src/adapters/; depend on a port.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
