/** Signing in (password or API key), choosing a password from a link, accepting an invitation. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, setApiKey, type Me, type SignedIn } from '../api';
import { ErrorNote, Field, go, useAction } from '../ui';

/** One labelled input bound to a state value (the auth pages' fields). */
function TextField(props: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'email' | 'password';
  autoComplete: string;
  required?: boolean;
  hint?: string;
  dir?: 'auto';
}) {
  return (
    <Field label={props.label} hint={props.hint}>
      <input
        type={props.type ?? 'text'}
        dir={props.dir}
        autoComplete={props.autoComplete}
        required={props.required}
        value={props.value}
        onInput={(e) => props.onValue(e.currentTarget.value)}
      />
    </Field>
  );
}

/** The card every auth page is: a titled form that runs `onSubmit` with the default prevented. */
function AuthForm(props: { id: string; title: string; onSubmit: () => void; children: ComponentChildren }) {
  const submit = (event: Event) => {
    event.preventDefault();
    props.onSubmit();
  };
  return (
    <main class="auth" id="main">
      <form class="card auth-card" onSubmit={submit} aria-labelledby={props.id}>
        <h1 id={props.id}>{props.title}</h1>
        {props.children}
      </form>
    </main>
  );
}

export function SignInPage({ onSignedIn }: { onSignedIn: (session: SignedIn | null) => void }) {
  const [mode, setMode] = useState<'password' | 'key' | 'forgot'>('password');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [sent, setSent] = useState(false);
  const action = useAction();

  const signIn = () => {
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
    <AuthForm
      id="auth-title"
      title={mode === 'forgot' ? 'Reset your password' : 'Sign in to Switchboard'}
      onSubmit={signIn}
    >
      {mode === 'key' ? (
        <TextField
          label="API key"
          hint="A developer's key (sk_…); it is kept in this tab only."
          type="password"
          autoComplete="off"
          required
          value={key}
          onValue={setKey}
        />
      ) : (
        <TextField label="E-mail" type="email" autoComplete="username" required value={email} onValue={setEmail} />
      )}
      {mode === 'password' ? (
        <TextField
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
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
    </AuthForm>
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
  const submit = () => {
    void action.run(async () => {
      if (password !== again) throw new Error('The two passwords differ');
      const session = await api<SignedIn>('/api/public/auth/password', { method: 'POST', body: { token, password } });
      go('');
      onSignedIn(session);
    });
  };
  return (
    <AuthForm id="set-title" title="Choose your password" onSubmit={submit}>
      <TextField
        label="New password"
        type="password"
        autoComplete="new-password"
        required
        value={password}
        onValue={setPassword}
      />
      <PasswordHint />
      <TextField
        label="The same password again"
        type="password"
        autoComplete="new-password"
        required
        value={again}
        onValue={setAgain}
      />
      <ErrorNote error={action.error} />
      <button type="submit" class="primary" disabled={action.pending || !token}>
        {action.pending ? 'Saving…' : 'Save and sign in'}
      </button>
    </AuthForm>
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
  const submit = () => {
    void action.run(async () => {
      const body = { token, password, first_name: first, last_name: last };
      const session = await api<SignedIn>('/api/public/auth/invitations/accept', { method: 'POST', body });
      go('');
      onSignedIn(session);
    });
  };
  return (
    <AuthForm id="accept-title" title="Join your team on Switchboard" onSubmit={submit}>
      <div class="row">
        <TextField label="First name" dir="auto" autoComplete="given-name" value={first} onValue={setFirst} />
        <TextField label="Last name" dir="auto" autoComplete="family-name" value={last} onValue={setLast} />
      </div>
      <TextField
        label="Choose a password"
        type="password"
        autoComplete="new-password"
        required
        value={password}
        onValue={setPassword}
      />
      <PasswordHint />
      <ErrorNote error={action.error} />
      <p class="field-hint">
        Already have a password? <a href="#/">Sign in</a>, then accept from the Members page.
      </p>
      <button type="submit" class="primary" disabled={action.pending || !token}>
        {action.pending ? 'Joining…' : 'Accept the invitation'}
      </button>
    </AuthForm>
  );
}
