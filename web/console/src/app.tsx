/** The shell: who is signed in, the company switch, the navigation and the page of the route. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, apiKey, setApiKey, setCsrfToken, whenSignedOut, type Me, type SignedIn } from './api';
import { AgentsPage } from './pages/agents';
import { AcceptInvitationPage, SetPasswordPage, SignInPage } from './pages/auth';
import { DeploymentsPage } from './pages/deployments';
import { HomePage } from './pages/home';
import { InsightsPage } from './pages/insights';
import { InboxPage } from './pages/inbox';
import { IntegrationsPage } from './pages/integrations';
import { KeysPage } from './pages/keys';
import { KnowledgePage } from './pages/knowledge';
import { MembersPage } from './pages/members';
import { NotificationsPage } from './pages/notifications';
import { VoicePage } from './pages/voice';
import { WebhooksPage } from './pages/webhooks';
import { ErrorNote, errorText, Loading, useRoute } from './ui';

const NAV: [path: string, label: string][] = [
  ['', 'Getting started'],
  ['agents', 'Agents'],
  ['knowledge', 'Knowledge'],
  ['deployments', 'Deployments'],
  ['inbox', 'Inbox'],
  ['insights', 'Insights'],
  ['notifications', 'Notifications'],
  ['integrations', 'Integrations'],
  ['voice', 'Voice agents'],
  ['webhooks', 'Webhooks'],
  ['members', 'Members'],
  ['keys', 'API keys & tokens'],
];

type State =
  { kind: 'loading' } | { kind: 'signed-out' } | { kind: 'signed-in'; me: Me } | { kind: 'failed'; error: string };

export function App() {
  const route = useRoute();
  const [state, setState] = useState<State>({ kind: 'loading' });

  const loadMe = useCallback(async () => {
    try {
      if (!apiKey()) {
        const session = await api<SignedIn>('/api/public/auth/session');
        setCsrfToken(session.csrf_token);
      }
      setState({ kind: 'signed-in', me: await api<Me>('/api/public/users/me') });
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status === 401 || status === 400) setState({ kind: 'signed-out' });
      else setState({ kind: 'failed', error: errorText(error) });
    }
  }, []);

  useEffect(() => {
    whenSignedOut(() => {
      setCsrfToken(null);
      setState({ kind: 'signed-out' });
    });
    void loadMe();
  }, [loadMe]);

  const signedIn = (session: SignedIn | null) => {
    if (session) setCsrfToken(session.csrf_token);
    setState({ kind: 'loading' });
    void loadMe();
  };

  const [first = '', second] = route.path;
  const token = route.params.get('token') ?? '';
  if (first === 'set-password') return <SetPasswordPage token={token} onSignedIn={signedIn} />;
  if (first === 'accept' && state.kind !== 'signed-in')
    return <AcceptInvitationPage token={token} onSignedIn={signedIn} />;
  if (state.kind === 'loading') return <Loading what="the console" />;
  if (state.kind === 'failed') return <ErrorNote error={state.error} />;
  if (state.kind === 'signed-out') return <SignInPage onSignedIn={signedIn} />;

  const signOut = async (everywhere: boolean) => {
    if (apiKey()) setApiKey(null);
    else
      await api(everywhere ? '/api/public/auth/sign-out-everywhere' : '/api/public/auth/sign-out', {
        method: 'POST',
      }).catch(() => null);
    setCsrfToken(null);
    setState({ kind: 'signed-out' });
  };
  return (
    <Shell me={state.me} current={first} onSignOut={signOut} onCompanyChanged={() => void loadMe()}>
      <Page name={first} id={second} me={state.me} token={token} onChanged={() => void loadMe()} />
    </Shell>
  );
}

function Page({
  name,
  id,
  me,
  token,
  onChanged,
}: {
  name: string;
  id?: string;
  me: Me;
  token: string;
  onChanged: () => void;
}) {
  if (!me.active_company_id) return <MembersPage me={me} invitationToken={token} onChanged={onChanged} />;
  switch (name) {
    case '':
      return <HomePage />;
    case 'agents':
      return <AgentsPage selected={id} />;
    case 'knowledge':
      return <KnowledgePage />;
    case 'deployments':
      return <DeploymentsPage selected={id} />;
    case 'inbox':
      return <InboxPage selected={id} me={me} />;
    case 'insights':
      return <InsightsPage />;
    case 'notifications':
      return <NotificationsPage userId={me.id} />;
    case 'integrations':
      return <IntegrationsPage />;
    case 'voice':
      return <VoicePage />;
    case 'webhooks':
      return <WebhooksPage me={me} selected={id} />;
    case 'members':
    case 'accept':
      return <MembersPage me={me} invitationToken={token} onChanged={onChanged} />;
    case 'keys':
      return <KeysPage />;
    default:
      return (
        <section>
          <h1>Page not found</h1>
          <p>
            There is no page here. <a href="#/">Go to Getting started</a>.
          </p>
        </section>
      );
  }
}

function Shell(props: {
  me: Me;
  current: string;
  onSignOut: (everywhere: boolean) => Promise<void>;
  onCompanyChanged: () => void;
  children: ComponentChildren;
}) {
  const { me } = props;
  const [menuOpen, setMenuOpen] = useState(false);
  const [switchError, setSwitchError] = useState<string | null>(null);
  const switchCompany = async (companyId: string) => {
    setSwitchError(null);
    try {
      await api(`/api/public/companies/switch/${companyId}`, { method: 'POST' });
      props.onCompanyChanged();
    } catch (error) {
      setSwitchError(errorText(error));
    }
  };
  return (
    <div class="shell">
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="topbar">
        <button
          type="button"
          class="menu-button"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <span class="brand">Switchboard</span>
        {me.memberships.length > 0 ? (
          <label class="company-switch">
            <span class="visually-hidden">Company</span>
            <select value={me.active_company_id ?? ''} onChange={(e) => void switchCompany(e.currentTarget.value)}>
              {me.memberships.map((m) => (
                <option key={m.company_id} value={m.company_id} dir="auto">
                  {m.company_name} ({m.role})
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <span class="who" dir="auto">
          {me.email}
        </span>
        <button type="button" onClick={() => void props.onSignOut(false)}>
          Sign out
        </button>
        {apiKey() ? null : (
          <button type="button" class="secondary hide-narrow" onClick={() => void props.onSignOut(true)}>
            Sign out everywhere
          </button>
        )}
      </header>
      <ErrorNote error={switchError} />
      <div class="body">
        <nav id="nav" class={menuOpen ? 'nav open' : 'nav'} aria-label="Console">
          <ul>
            {NAV.map(([path, label]) => (
              <li key={path}>
                <a
                  href={`#/${path}`}
                  aria-current={props.current === path ? 'page' : undefined}
                  onClick={() => setMenuOpen(false)}
                >
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {props.children}
        </main>
      </div>
    </div>
  );
}
