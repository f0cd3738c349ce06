/** The `.env` file of the directory the service or the CLI starts in. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from './config.js';

/**
 * Loads `.env` from the working directory into process.env when the file exists (Node's own
 * parser, `process.loadEnvFile`): a variable already in the environment wins over the file's.
 * Returns the file's path when one was loaded. Called by the entries (`npm start`, the CLI)
 * before the configuration is read.
 */
export function loadDotEnv(file = path.resolve('.env')): string | null {
  if (!existsSync(file)) return null;
  try {
    process.loadEnvFile(file);
  } catch (error) {
    throw new ConfigError(
      '.env',
      `could not be read (${file}): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return file;
}
