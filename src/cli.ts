/**
 * The `switchboard` CLI (`npx switchboard <command>`): migrate, keys create, tokens create,
 * worker. Commands use the same configuration as the service (DATABASE_URL or the embedded
 * database under DATA_DIR) and the same services.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, loadConfigWith } from './config.js';
import { createContainer, type Container } from './container.js';
import { migrateToLatest } from './db/migrator.js';
import { generateSecret, hashSecret, secretHint } from './lib/secrets.js';
import { ROLES, type Role } from './lib/roles.js';
import { findAgent } from './modules/agents/index.js';
import { findMembership, insertMember } from './modules/companies/companies.repo.js';
import { findUserByEmail, insertApiKey, insertUser, setActiveCompany } from './modules/identity/identity.repo.js';
import { createLogger, resolveDatabase } from './server.js';
import { seedDemo } from './modules/support-queries/support-queries.demo.js';

const USAGE = `Usage: switchboard <command> [options]

Commands:
  migrate                                   apply pending database migrations
  keys create --email E [--company C] [--role R] [--name N]
                                            mint an API key for a user (created when missing);
                                            with --company, the user is made a member (role R, default member)
  tokens create [--company C] [--agent A] [--name N]
                                            mint a chat token for a company (or for one agent)
  worker                                    run the background job workers only (no HTTP)
  seed --demo [--company C] [--queries N] [--days D]
                                            generate realistic support history (agents, end users,
                                            queries, notes, notifications) for a company; default
                                            2000 queries over 180 days; above 10000 rows go in bulk
`;

class UsageError extends Error {}

type Command = (container: Container, args: string[]) => Promise<void>;

function out(line: string) {
  process.stdout.write(`${line}\n`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A company by id or exact name; the only company when none is named and there is just one. */
async function resolveCompany(container: Container, ref: string | undefined): Promise<string> {
  let query = container.db.selectFrom('companies').select(['id', 'name']);
  if (ref) query = UUID.test(ref) ? query.where('id', '=', ref) : query.where('name', '=', ref);
  const rows = await query.limit(2).execute();
  if (rows.length === 0)
    throw new UsageError(ref ? `No company "${ref}"` : 'There is no company yet: start the service once to bootstrap');
  if (rows.length > 1)
    throw new UsageError(
      ref ? `Several companies are named "${ref}": pass its id` : 'Several companies exist: pass --company',
    );
  return rows[0]!.id;
}

const commands: Record<string, Command> = {
  async migrate(container) {
    const applied = await migrateToLatest(container.db);
    out(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date');
  },

  async 'keys create'(container, args) {
    const { values } = parseArgs({
      args,
      options: {
        email: { type: 'string' },
        company: { type: 'string' },
        role: { type: 'string' },
        name: { type: 'string' },
      },
    });
    if (!values.email || !/^[^@\s]+@[^@\s]+$/.test(values.email))
      throw new UsageError('--email must be an e-mail address');
    const role = (values.role ?? 'member') as Role;
    if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
    await migrateToLatest(container.db);
    const companyId = values.company ? await resolveCompany(container, values.company) : null;
    const key = generateSecret('sk_');
    const email = values.email.toLowerCase();
    await container.db.transaction().execute(async (trx) => {
      const user =
        (await findUserByEmail(trx, email)) ?? (await insertUser(trx, { email, first_name: '', last_name: '' }));
      if (companyId && !(await findMembership(trx, companyId, user.id))) {
        await insertMember(trx, { company_id: companyId, user_id: user.id, role });
      }
      if (companyId && !user.active_company_id) await setActiveCompany(trx, user.id, companyId);
      await insertApiKey(trx, {
        user_id: user.id,
        name: values.name ?? 'cli',
        key_hash: hashSecret(key),
        key_hint: secretHint(key),
      });
    });
    out(`API key for ${email} (shown once; send it as x-api-key):`);
    out(key);
  },

  async 'tokens create'(container, args) {
    const { values } = parseArgs({
      args,
      options: { company: { type: 'string' }, agent: { type: 'string' }, name: { type: 'string' } },
    });
    if (values.agent && !UUID.test(values.agent)) throw new UsageError('--agent must be an agent id (UUID)');
    await migrateToLatest(container.db);
    let companyId: string;
    if (values.agent) {
      const agent = await container.db
        .selectFrom('agents')
        .select('company_id')
        .where('id', '=', values.agent)
        .executeTakeFirst();
      if (!agent) throw new UsageError(`No agent ${values.agent}`);
      companyId = agent.company_id;
      if (values.company && (await resolveCompany(container, values.company)) !== companyId) {
        throw new UsageError('The agent belongs to another company');
      }
      if (!(await findAgent(container.db, companyId, values.agent))) throw new UsageError(`No agent ${values.agent}`);
    } else {
      companyId = await resolveCompany(container, values.company);
    }
    const token = generateSecret('ct_');
    await container.db
      .insertInto('chat_tokens')
      .values({
        company_id: companyId,
        agent_id: values.agent ?? null,
        name: values.name ?? 'cli',
        token_hash: hashSecret(token),
        token_hint: secretHint(token),
        created_by: null,
      })
      .execute();
    out(
      `Chat token for company ${companyId}${values.agent ? `, agent ${values.agent}` : ''} (shown once; send it as x-api-token):`,
    );
    out(token);
  },

  async seed(container, args) {
    const { values } = parseArgs({
      args,
      options: {
        demo: { type: 'boolean' },
        company: { type: 'string' },
        queries: { type: 'string' },
        days: { type: 'string' },
      },
    });
    if (!values.demo) throw new UsageError('seed needs --demo (the only kind of seed there is)');
    const queries = Number(values.queries ?? 2000);
    const days = Number(values.days ?? 180);
    if (!Number.isInteger(queries) || queries < 1 || queries > 10_000_000)
      throw new UsageError('--queries must be an integer from 1 to 10000000');
    if (!Number.isInteger(days) || days < 1 || days > 3650)
      throw new UsageError('--days must be an integer from 1 to 3650');
    await migrateToLatest(container.db);
    const companyId = await resolveCompany(container, values.company);
    const started = Date.now();
    const result = await seedDemo(
      { db: container.db, clock: container.clock, notifications: container.notifications },
      { companyId, queries, days, onProgress: (done) => out(`  ${done} queries`) },
    );
    out(
      `Seeded company ${companyId}: ${result.agents} agents, ${result.endUsers} end users, ${result.queries} support queries in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  },

  async worker(container) {
    await migrateToLatest(container.db);
    await container.start();
    container.log.info('workers running; stop with SIGTERM');
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
  },
};

async function run(argv: string[]): Promise<number> {
  const [first, second, ...rest] = argv;
  if (!first || first === 'help' || first === '--help') {
    out(USAGE);
    return first ? 0 : 64;
  }
  const name = commands[`${first} ${second}`] ? `${first} ${second}` : first;
  const command = commands[name];
  if (!command) {
    process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n${USAGE}`);
    return 64;
  }
  const args = name.includes(' ') ? rest : argv.slice(1);
  const config = name === 'worker' ? loadConfig() : loadConfigWith({ RUN_WORKERS: 'false' });
  const log = createLogger(config);
  const { url, embedded } = await resolveDatabase(config, log);
  const container = createContainer({ config, databaseUrl: url, log });
  try {
    await command(container, args);
    return 0;
  } finally {
    await container.close();
    await embedded?.stop();
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(error instanceof ConfigError ? 78 : 64);
    }
    process.stderr.write(`switchboard: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
