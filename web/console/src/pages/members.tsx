/** Members and invitations of the active company; accepting an invitation with a token. */
import { useState } from 'preact/hooks';
import { api, type Me, type Page } from '../api';
import { ErrorNote, Field, Loading, PageHeader, useAction, useLoad, when } from '../ui';

interface Member {
  id: string;
  role: string;
  joined_at: string;
  user: { id: string; email: string; first_name: string; last_name: string };
}

interface Invitation {
  id: string;
  email: string;
  role: string;
  status: string;
  expires_at: string;
}

const canAdminister = (me: Me) => me.role === 'owner' || me.role === 'admin';

export function MembersPage({
  me,
  invitationToken,
  onChanged,
}: {
  me: Me;
  invitationToken: string;
  onChanged: () => void;
}) {
  return (
    <section>
      <PageHeader title="Members" />
      {!me.active_company_id ? (
        <p class="note">
          You belong to no company yet. Accept an invitation below, or ask an administrator to invite you.
        </p>
      ) : null}
      <AcceptInvitation token={invitationToken} onAccepted={onChanged} />
      {me.active_company_id ? <MemberList me={me} /> : null}
    </section>
  );
}

function MemberList({ me }: { me: Me }) {
  const members = useLoad((signal) => api<Page<Member>>('/api/public/companies/members?limit=100', { signal }));
  const invitations = useLoad((signal) =>
    canAdminister(me)
      ? api<Page<Invitation>>('/api/public/companies/invitations?limit=100', { signal })
      : Promise.resolve({ data: [], total: 0 }),
  );
  const action = useAction();
  const remove = (member: Member) =>
    void action.run(async () => {
      if (!confirm(`Remove ${member.user.email} from the company?`)) return;
      await api(`/api/public/companies/members/${member.id}`, { method: 'DELETE' });
      members.reload();
    });
  const revoke = (invitation: Invitation) =>
    void action.run(async () => {
      await api(`/api/public/companies/invitations/${invitation.id}`, { method: 'DELETE' });
      invitations.reload();
    });
  return (
    <>
      {members.loading && !members.data ? <Loading what="members" /> : null}
      <ErrorNote error={members.error ?? action.error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Members</caption>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              {canAdminister(me) ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {members.data?.data.map((member) => (
              <tr key={member.id}>
                <td dir="auto">
                  {[member.user.first_name, member.user.last_name].filter(Boolean).join(' ') || '—'}
                  <br />
                  <span class="muted">{member.user.email}</span>
                </td>
                <td>{member.role}</td>
                <td>{when(member.joined_at)}</td>
                {canAdminister(me) ? (
                  <td>
                    {member.user.id !== me.id ? (
                      <button
                        type="button"
                        class="danger"
                        onClick={() => remove(member)}
                        aria-label={`Remove ${member.user.email}`}
                      >
                        Remove
                      </button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {canAdminister(me) ? (
        <>
          <Invite onInvited={invitations.reload} />
          <section class="card" aria-labelledby="pending-title">
            <h2 id="pending-title">Pending invitations</h2>
            <ErrorNote error={invitations.error} />
            {invitations.data && invitations.data.data.length === 0 ? <p>No pending invitations.</p> : null}
            <ul class="list">
              {invitations.data?.data.map((invitation) => (
                <li key={invitation.id}>
                  <span>
                    {invitation.email}{' '}
                    <span class="muted">
                      as {invitation.role}, until {when(invitation.expires_at)}
                    </span>
                  </span>
                  <button
                    type="button"
                    onClick={() => revoke(invitation)}
                    aria-label={`Revoke the invitation of ${invitation.email}`}
                  >
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          </section>
        </>
      ) : null}
    </>
  );
}

function Invite({ onInvited }: { onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const [sent, setSent] = useState<string | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('/api/public/companies/invitations', { method: 'POST', body: { email, role } });
      setSent(email);
      setEmail('');
      onInvited();
    });
  };
  return (
    <form class="card form" onSubmit={submit} aria-label="Invite someone">
      <h2>Invite someone</h2>
      <div class="row">
        <Field label="E-mail">
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field label="Role">
          <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            <option value="member">Member (reads)</option>
            <option value="developer">Developer (builds agents)</option>
            <option value="admin">Admin (manages people)</option>
          </select>
        </Field>
      </div>
      <ErrorNote error={action.error} />
      {sent ? <p role="status">Invitation e-mailed to {sent}.</p> : null}
      <button type="submit" class="primary" disabled={action.pending}>
        Send invitation
      </button>
    </form>
  );
}

function AcceptInvitation({ token: initial, onAccepted }: { token: string; onAccepted: () => void }) {
  const [token, setToken] = useState(initial);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('/api/public/companies/invitations/accept', { method: 'POST', body: { token } });
      setToken('');
      onAccepted();
    });
  };
  return (
    <form class="card form inline-form" onSubmit={submit} aria-label="Accept an invitation">
      <Field label="Invitation token" hint="From the invitation e-mail (inv_…).">
        <input required autoComplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
      </Field>
      <ErrorNote error={action.error} />
      <button type="submit" disabled={action.pending}>
        Accept invitation
      </button>
    </form>
  );
}
