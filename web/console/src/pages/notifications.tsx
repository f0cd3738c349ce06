/** Team notifications: what agents and the platform reported, with each one's read state. */
import { api, type Page } from '../api';
import { Empty, ErrorNote, Loading, PageHeader, useAction, useLoad, when } from '../ui';

interface Notification {
  id: string;
  title: string;
  message: string;
  priority: string;
  category: string;
  status: 'unread' | 'read' | 'archived';
  created_at: string;
}

export function NotificationsPage({ userId }: { userId: string }) {
  const list = useLoad((signal) => api<Page<Notification>>('/team-notifications?limit=50', { signal }));
  const action = useAction();
  const mark = (notification: Notification, status: 'read' | 'unread') =>
    void action.run(async () => {
      await api(`/team-notifications/${notification.id}/users/${userId}/status`, { method: 'PATCH', body: { status } });
      list.reload();
    });
  return (
    <section>
      <PageHeader title="Notifications" />
      {list.loading && !list.data ? <Loading what="notifications" /> : null}
      <ErrorNote error={list.error ?? action.error} />
      {list.data && list.data.data.length === 0 ? (
        <Empty title="No notifications">
          <p>Deployments, escalations and agents' actions are reported here.</p>
        </Empty>
      ) : null}
      <ul class="list notifications">
        {list.data?.data.map((n) => (
          <li key={n.id} class={n.status === 'unread' ? 'unread' : ''}>
            <div>
              <strong dir="auto">{n.title}</strong>
              <p dir="auto">{n.message}</p>
              <span class="muted">
                {n.category} · {n.priority} · {when(n.created_at)} · <span class="badge">{n.status}</span>
              </span>
            </div>
            {n.status === 'unread' ? (
              <button type="button" onClick={() => mark(n, 'read')} aria-label={`Mark read: ${n.title}`}>
                Mark read
              </button>
            ) : (
              <button
                type="button"
                class="secondary"
                onClick={() => mark(n, 'unread')}
                aria-label={`Mark unread: ${n.title}`}
              >
                Mark unread
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
