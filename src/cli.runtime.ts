/**
 * What the CLI's commands need once their arguments are checked: the container, migrations, the
 * repositories they write through. Loaded by `src/cli.ts` only when a command runs, so that
 * `--help`, usage errors and unknown commands answer without loading the service.
 */
export { createContainer } from './container.js';
export { migrateToLatest } from './db/migrator.js';
export { generateSecret, hashSecret, secretHint } from './lib/secrets.js';
export { findAgent } from './modules/agents/index.js';
export { findMembership, insertMember, setActiveCompany } from './modules/companies/index.js';
export { findUserByEmail, insertApiKey, insertUser } from './modules/identity/index.js';
export { createLogger, resolveDatabase } from './server.js';
export { seedDemo } from './modules/support-queries/index.js';
