/**
 * The `switchboard` CLI (`npx switchboard <command>`): migrate, keys create, tokens create,
 * worker. Commands use the same configuration as the service (DATABASE_URL or the embedded
 * database under DATA_DIR) and the same services.
 */
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig, loadConfigWith } from './config.js';
import { loadDotEnv } from './env-file.js';
import type { Container } from './container.js';
import type * as CliRuntime from './cli.runtime.js';
import { ROLES, type Role } from './lib/roles.js';

/** The service's code, loaded only once a command is about to run (see src/cli.runtime.ts). */
type Runtime = typeof CliRuntime;

const USAGE = `Usage: switchboard <command> [options]
       switchboard --version

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

/** A wrong invocation: its message, then the usage of the command concerned; exit code 64. */
class UsageError extends Error {
  constructor(
    message: string,
    readonly usage?: string,
  ) {
    super(message);
  }
}

/** The work of a command once its arguments are parsed and checked (before any database is reached). */
type Work = (container: Container, runtime: Runtime) => Promise<void>;

interface Command {
  usage: string;
  /** Parses and checks the arguments; a UsageError for anything wrong. */
  prepare(args: string[]): Work;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** Strict parsing: an unknown option, a missing value or a stray argument is a usage error. */
function parse<const O extends Options>(usage: string, args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), usage);
  }
}

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
  migrate: {
    usage: `Usage: switchboard migrate

Applies the pending database migrations (the service also does at start-up).
`,
    prepare(args) {
      parse(this.usage, args, {});
      return async (container, runtime) => {
        const applied = await runtime.migrateToLatest(container.db);
        out(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date');
      };
    },
  },

  'keys create': {
    usage: `Usage: switchboard keys create --email E [--company C] [--role R] [--name N]

Mints an API key for the user with e-mail E (created when missing) and prints it once.
  --email E     the user's e-mail address
  --company C   a company id or exact name: the user is made a member (role R) and, if they have
                no active company, it becomes theirs
  --role R      ${ROLES.join(', ')} (default member)
  --name N      the key's name (default cli)
`,
    prepare(args) {
      const values = parse(this.usage, args, {
        email: { type: 'string' },
        company: { type: 'string' },
        role: { type: 'string' },
        name: { type: 'string' },
      });
      const { email: given, company, name } = values;
      if (!given || !/^[^@\s]+@[^@\s]+$/.test(given))
        throw new UsageError('--email must be an e-mail address', this.usage);
      const role = (values.role ?? 'member') as Role;
      if (!ROLES.includes(role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}`, this.usage);
      const email = given.toLowerCase();
      return async (container, runtime) => {
        await runtime.migrateToLatest(container.db);
        const companyId = company ? await resolveCompany(container, company) : null;
        const key = runtime.generateSecret('sk_');
        await container.db.transaction().execute(async (trx) => {
          const user =
            (await runtime.findUserByEmail(trx, email)) ??
            (await runtime.insertUser(trx, { email, first_name: '', last_name: '' }));
          if (companyId && !(await runtime.findMembership(trx, companyId, user.id))) {
            await runtime.insertMember(trx, { company_id: companyId, user_id: user.id, role });
          }
          if (companyId && !user.active_company_id) await runtime.setActiveCompany(trx, user.id, companyId);
          await runtime.insertApiKey(trx, {
            user_id: user.id,
            name: name ?? 'cli',
            key_hash: runtime.hashSecret(key),
            key_hint: runtime.secretHint(key),
          });
        });
        out(`API key for ${email} (shown once; send it as x-api-key):`);
        out(key);
      };
    },
  },

  'tokens create': {
    usage: `Usage: switchboard tokens create [--company C] [--agent A] [--name N]

Mints a chat token (x-api-token) for a company, or for one of its agents, and prints it once.
  --company C   a company id or exact name (needed when there are several companies)
  --agent A     an agent id: the token serves that agent only
  --name N      the token's name (default cli)
`,
    prepare(args) {
      const { company, agent, name } = parse(this.usage, args, {
        company: { type: 'string' },
        agent: { type: 'string' },
        name: { type: 'string' },
      });
      if (agent && !UUID.test(agent)) throw new UsageError('--agent must be an agent id (UUID)', this.usage);
      return async (container, runtime) => {
        await runtime.migrateToLatest(container.db);
        let companyId: string;
        if (agent) {
          const found = await container.db
            .selectFrom('agents')
            .select('company_id')
            .where('id', '=', agent)
            .executeTakeFirst();
          if (!found) throw new UsageError(`No agent ${agent}`);
          companyId = found.company_id;
          if (company && (await resolveCompany(container, company)) !== companyId) {
            throw new UsageError('The agent belongs to another company');
          }
          if (!(await runtime.findAgent(container.db, companyId, agent))) throw new UsageError(`No agent ${agent}`);
        } else {
          companyId = await resolveCompany(container, company);
        }
        const token = runtime.generateSecret('ct_');
        await container.db
          .insertInto('chat_tokens')
          .values({
            company_id: companyId,
            agent_id: agent ?? null,
            name: name ?? 'cli',
            token_hash: runtime.hashSecret(token),
            token_hint: runtime.secretHint(token),
            created_by: null,
          })
          .execute();
        out(
          `Chat token for company ${companyId}${agent ? `, agent ${agent}` : ''} (shown once; send it as x-api-token):`,
        );
        out(token);
      };
    },
  },

  seed: {
    usage: `Usage: switchboard seed --demo [--company C] [--queries N] [--days D]

Generates realistic support history (agents, end users, queries, notes, notifications) for a
company. Above 10000 queries, rows go in bulk.
  --demo        required: the only kind of seed there is
  --company C   a company id or exact name (needed when there are several companies)
  --queries N   support queries to create, 1 to 10000000 (default 2000)
  --days D      spread over the last D days, 1 to 3650 (default 180)
`,
    prepare(args) {
      const values = parse(this.usage, args, {
        demo: { type: 'boolean' },
        company: { type: 'string' },
        queries: { type: 'string' },
        days: { type: 'string' },
      });
      if (!values.demo) throw new UsageError('seed needs --demo (the only kind of seed there is)', this.usage);
      const queries = Number(values.queries ?? 2000);
      const days = Number(values.days ?? 180);
      if (!Number.isInteger(queries) || queries < 1 || queries > 10_000_000)
        throw new UsageError('--queries must be an integer from 1 to 10000000', this.usage);
      if (!Number.isInteger(days) || days < 1 || days > 3650)
        throw new UsageError('--days must be an integer from 1 to 3650', this.usage);
      return async (container, runtime) => {
        await runtime.migrateToLatest(container.db);
        const companyId = await resolveCompany(container, values.company);
        const started = Date.now();
        const result = await runtime.seedDemo(
          { db: container.db, clock: container.clock, notifications: container.notifications },
          { companyId, queries, days, onProgress: (done) => out(`  ${done} queries`) },
        );
        out(
          `Seeded company ${companyId}: ${result.agents} agents, ${result.endUsers} end users, ${result.queries} support queries in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      };
    },
  },

  worker: {
    usage: `Usage: switchboard worker

Runs the background job workers only, without HTTP (run the API with RUN_WORKERS=false), until
SIGTERM or SIGINT.
`,
    prepare(args) {
      parse(this.usage, args, {});
      return async (container, runtime) => {
        await runtime.migrateToLatest(container.db);
        await container.start();
        container.log.info('workers running; stop with SIGTERM');
        await new Promise<void>((resolve) => {
          process.once('SIGTERM', resolve);
          process.once('SIGINT', resolve);
        });
      };
    },
  },
};

const HELP = new Set(['--help', '-h']);
const VERSION = new Set(['--version', '-v', 'version']);

/** The package's version (package.json sits two levels above both src/cli.ts and dist/cli.js). */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The command an argument list names, with its own arguments; or the commands of a group (`keys`). */
function findCommand(argv: string[]): { name: string; args: string[] } | { group: string[] } | null {
  const [first = '', second = ''] = argv;
  if (commands[`${first} ${second}`]) return { name: `${first} ${second}`, args: argv.slice(2) };
  if (commands[first]) return { name: first, args: argv.slice(1) };
  const group = Object.keys(commands).filter((name) => name.startsWith(`${first} `));
  return group.length ? { group } : null;
}

async function run(argv: string[]): Promise<number> {
  const [first, second] = argv;
  if (first && VERSION.has(first) && argv.length === 1) {
    out(`switchboard ${version()}`);
    return 0;
  }
  if (!first || first === 'help' || HELP.has(first)) {
    const named = first === 'help' && second ? findCommand(argv.slice(1)) : null;
    if (named && 'name' in named) out(commands[named.name]!.usage);
    else out(USAGE);
    return first ? 0 : 64;
  }
  const found = findCommand(argv);
  if (!found || 'group' in found) {
    const usage = found ? found.group.map((name) => commands[name]!.usage).join('\n') : USAGE;
    const asked = found && argv.slice(1).every((arg) => HELP.has(arg)) && argv.length > 1;
    if (asked) {
      out(usage);
      return 0;
    }
    process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n${usage}`);
    return 64;
  }
  const command = commands[found.name]!;
  // --help anywhere answers with the usage and does nothing else.
  if (found.args.some((arg) => HELP.has(arg))) {
    out(command.usage);
    return 0;
  }
  const work = command.prepare(found.args);
  loadDotEnv();
  const config = found.name === 'worker' ? loadConfig() : loadConfigWith({ RUN_WORKERS: 'false' });
  const runtime = await import('./cli.runtime.js');
  const log = runtime.createLogger(config);
  const { url, embedded } = await runtime.resolveDatabase(config, log, { attach: true });
  if (embedded && found.name !== 'worker') {
    // A signal must not leave the embedded database this command started running.
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      process.once(signal, () => void embedded.stop().finally(() => process.exit(130)));
    }
  }
  const container = runtime.createContainer({ config, databaseUrl: url, log });
  try {
    await work(container, runtime);
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
      if (error instanceof UsageError && error.usage) process.stderr.write(`\n${error.usage}`);
      process.exit(error instanceof ConfigError ? 78 : 64);
    }
    process.stderr.write(`switchboard: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
