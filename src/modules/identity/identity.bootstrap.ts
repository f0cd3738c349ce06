/**
 * First start on an empty database: a "Default company", its owner (BOOTSTRAP_ADMIN_EMAIL),
 * one API key, one chat token and a single-use link with which the owner chooses a password and
 * signs in to the console. Known values come from BOOTSTRAP_API_KEY / BOOTSTRAP_API_TOKEN;
 * otherwise random ones are generated and returned so the caller can print them once.
 * Later starts change nothing. Concurrent starts are serialized by an advisory lock.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { generateSecret, hashSecret, secretHint } from '../../lib/secrets.js';
import { insertCompany, insertMember, setActiveCompany } from '../companies/index.js';
import { insertApiKey, insertChatToken, insertUser } from './identity.repo.js';
import { createFirstSignInLink, passwordLinkUrl } from './identity.sign-in.service.js';

export interface BootstrapSettings {
  apiKey: string | undefined;
  apiToken: string | undefined;
  adminEmail: string;
}

/** Where the owner's first sign-in link points, and how long it works. */
export interface FirstSignIn {
  publicBaseUrl: string;
  expiresAt: Date;
}

export type BootstrapResult =
  | { created: false }
  | {
      created: true;
      companyId: string;
      userId: string;
      email: string;
      apiKey: string;
      apiToken: string;
      /** Which of the two were generated here (and so must be printed). */
      generated: { apiKey: boolean; apiToken: boolean };
      /** The single-use link that sets the owner's password (printed once). */
      signInLink: string;
      signInLinkExpiresAt: Date;
    };

export async function bootstrap(
  db: Db,
  settings: BootstrapSettings,
  firstSignIn: FirstSignIn,
): Promise<BootstrapResult> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('switchboard.bootstrap'))`.execute(trx);
    const existing = await trx.selectFrom('companies').select('id').limit(1).executeTakeFirst();
    if (existing) return { created: false } as const;

    const company = await insertCompany(trx, { name: 'Default company' });
    const user =
      (await trx
        .selectFrom('users')
        .select('id')
        .where(sql`lower(email)`, '=', settings.adminEmail)
        .executeTakeFirst()) ??
      (await insertUser(trx, { email: settings.adminEmail, first_name: 'Admin', last_name: '' }));
    await insertMember(trx, { company_id: company.id, user_id: user.id, role: 'owner' });
    await setActiveCompany(trx, user.id, company.id);

    const apiKey = settings.apiKey ?? generateSecret('sk_');
    const apiToken = settings.apiToken ?? generateSecret('ct_');
    await insertApiKey(trx, {
      user_id: user.id,
      name: 'bootstrap',
      key_hash: hashSecret(apiKey),
      key_hint: secretHint(apiKey),
    });
    await insertChatToken(trx, {
      company_id: company.id,
      agent_id: null,
      name: 'bootstrap',
      token_hash: hashSecret(apiToken),
      token_hint: secretHint(apiToken),
      created_by: user.id,
    });
    const linkToken = await createFirstSignInLink(trx, user.id, firstSignIn.expiresAt);
    return {
      created: true,
      companyId: company.id,
      userId: user.id,
      email: settings.adminEmail,
      apiKey,
      apiToken,
      generated: { apiKey: !settings.apiKey, apiToken: !settings.apiToken },
      signInLink: passwordLinkUrl(firstSignIn.publicBaseUrl, linkToken),
      signInLinkExpiresAt: firstSignIn.expiresAt,
    } as const;
  });
}

/** The lines printed once after a bootstrap. */
export function describeBootstrap(result: BootstrapResult): string {
  if (!result.created) return '';
  const show = (secret: string, generated: boolean) =>
    generated ? secret : `(the value of the environment variable, ${secretHint(secret)})`;
  return [
    '',
    '  Switchboard bootstrap: created "Default company" and its owner.',
    `    owner e-mail : ${result.email}`,
    `    x-api-key    : ${show(result.apiKey, result.generated.apiKey)}`,
    `    x-api-token  : ${show(result.apiToken, result.generated.apiToken)}`,
    '  Sign in to the console the first time with this link (it works once, until',
    `  ${result.signInLinkExpiresAt.toISOString()}; it asks you to choose a password):`,
    `    ${result.signInLink}`,
    '  These secrets are stored only as hashes and will not be shown again.',
    '',
  ].join('\n');
}
