/** Signing in (password or API key), choosing a password from a link, accepting an invitation. */
import { useState } from 'preact/hooks';
import { api, setApiKey, type Me, type SignedIn } from '../api';
import { ErrorNote, Field, go, useAction } from '../ui';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: SignedIn | null) => void }) {
  const [mode, setMode] = useState<'password' | 'key' | 'forgot'>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [sent, setSent] = useState(false);
  const action = useAction();

  const signIn = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      if (mode === 'key') {
        setApiKey(key.trim());
        try {
          await api<Me>('/api/public/users/me');
        } catch (error) {
          setApiKey(null);
          throw error;
        }
        onSignedIn(null);
      } else if (mode === 'forgot') {
        await api('/api/public/auth/password-reset', { method: 'POST', body: { email } });
        setSent(true);
      } else {
        onSignedIn(await api<SignedIn>('/api/public/auth/sign-in', { method: 'POST', body: { email, password } }));
      }
    });
  };

  return (
    <main class="auth" id="main">
      <form class="card auth-card" onSubmit={signIn} aria-labelledby="auth-title">
        <h1 id="auth-title">{mode === 'forgot' ? 'Reset your password' : 'Sign in to Switchboard'}</h1>
        {mode === 'key' ? (
          <Field label="API key" hint="A developer's key (sk_…); it is kept in this tab only.">
            <input
              type="password"
              autoComplete="off"
              required
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
            />
          </Field>
        ) : (
          <Field label="E-mail">
            <input
              type="email"
              autoComplete="username"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </Field>
        )}
        {mode === 'password' ? (
          <Field label="Password">
            <input
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </Field>
        ) : null}
        <ErrorNote error={action.error} />
        {sent ? (
          <p role="status" class="note">
            If this e-mail has an account, a link to choose a new password is on its way. It works once.
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={action.pending}>
          {action.pending ? 'Please wait…' : mode === 'forgot' ? 'Send the link' : 'Sign in'}
        </button>
        <div class="auth-links">
          {mode !== 'password' ? (
            <button type="button" class="link" onClick={() => setMode('password')}>
              Sign in with e-mail and password
            </button>
          ) : (
            <button type="button" class="link" onClick={() => setMode('forgot')}>
              Forgot your password?
            </button>
          )}
          {mode !== 'key' ? (
            <button type="button" class="link" onClick={() => setMode('key')}>
              Use an API key instead
            </button>
          ) : null}
        </div>
      </form>
    </main>
  );
}

function PasswordHint() {
  return (
    <p class="field-hint">
      At least 12 characters; a few unrelated words make a good one. Common and breached passwords are refused.
    </p>
  );
}

/** The page of a reset link or of the first sign-in link printed at first start. */
export function SetPasswordPage({ token, onSignedIn }: { token: string; onSignedIn: (session: SignedIn) => void }) {
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      if (password !== again) throw new Error('The two passwords differ');
      const session = await api<SignedIn>('/api/public/auth/password', { method: 'POST', body: { token, password } });
      go('');
      onSignedIn(session);
    });
  };
  return (
    <main class="auth" id="main">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="set-title">
        <h1 id="set-title">Choose your password</h1>
        <Field label="New password">
          <input
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <PasswordHint />
        <Field label="The same password again">
          <input
            type="password"
            autoComplete="new-password"
            required
            value={again}
            onInput={(e) => setAgain(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={action.error} />
        <button type="submit" class="primary" disabled={action.pending || !token}>
          {action.pending ? 'Saving…' : 'Save and sign in'}
        </button>
      </form>
    </main>
  );
}

export function AcceptInvitationPage({
  token,
  onSignedIn,
}: {
  token: string;
  onSignedIn: (session: SignedIn) => void;
}) {
  const [first, setFirst] = useState('');
  const [last, setLast] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = { token, password, first_name: first, last_name: last };
      const session = await api<SignedIn>('/api/public/auth/invitations/accept', { method: 'POST', body });
      go('');
      onSignedIn(session);
    });
  };
  return (
    <main class="auth" id="main">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="accept-title">
        <h1 id="accept-title">Join your team on Switchboard</h1>
        <div class="row">
          <Field label="First name">
            <input
              dir="auto"
              autoComplete="given-name"
              value={first}
              onInput={(e) => setFirst(e.currentTarget.value)}
            />
          </Field>
          <Field label="Last name">
            <input dir="auto" autoComplete="family-name" value={last} onInput={(e) => setLast(e.currentTarget.value)} />
          </Field>
        </div>
        <Field label="Choose a password">
          <input
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <PasswordHint />
        <ErrorNote error={action.error} />
        <p class="field-hint">
          Already have a password? <a href="#/">Sign in</a>, then accept from the Members page.
        </p>
        <button type="submit" class="primary" disabled={action.pending || !token}>
          {action.pending ? 'Joining…' : 'Accept the invitation'}
        </button>
      </form>
    </main>
  );
}
