// The page's notifications: the "Enable notifications" switch (shown only where the browser can receive Web Push and
// the server sends it), the service worker at /sw.js that shows them, and the conversation a clicked notification
// asks for. The work (permission, subscription, registration with the server) is the library's: /lib/push.js.
import { notificationsSupported } from '/lib/push.js';

const SW = { serviceWorkerUrl: '/sw.js' };
const $ = (id) => document.getElementById(id);

/**
 * Sets up the switch for this signed-in client; `openConversation(id)` opens a conversation a notification was
 * clicked for (at once when the page was opened by one). Resolves with `{signOut}`: turns notifications off for
 * this device before the user signs out, so a shared browser does not keep notifying for them.
 */
export async function setUpNotifications(client, { openConversation }) {
  const fromNotification = () => {
    const id = new URLSearchParams(location.hash.slice(1)).get('c');
    if (id) {
      history.replaceState(null, '', location.pathname);
      openConversation(id);
    }
  };
  fromNotification();
  addEventListener('hashchange', fromNotification);
  const state = { on: false };
  const off = { signOut: async () => {} };
  if (!notificationsSupported()) {
    return off;
  }
  navigator.serviceWorker.addEventListener('message', (ev) => {
    if (ev.data?.type === 'open-conversation' && ev.data.conversationId) openConversation(ev.data.conversationId);
  });
  let config;
  try {
    config = await client.http.pushConfig();
  } catch {
    return off; // the server runs without notifications: no switch
  }
  if (!config?.vapidPublicKey || !config.providers?.some((p) => String(p).toLowerCase() === 'webpush')) {
    return off;
  }
  const button = $('notify');
  const note = $('notify-note');
  const render = () => {
    button.textContent = state.on ? 'Turn notifications off' : 'Enable notifications';
    note.textContent = state.on ? 'notifications on' : '';
  };
  const run = async (turnOn) => {
    button.disabled = true;
    try {
      if (turnOn) await client.enableNotifications(SW);
      else await client.disableNotifications(SW);
      state.on = turnOn;
      render();
    } catch (e) {
      render();
      note.textContent = e.error ?? e.message;
    } finally {
      button.disabled = false;
    }
  };
  button.onclick = () => run(!state.on);
  render();
  $('notify-bar').hidden = false;
  // On in this browser before (allowed, subscribed): register the subscription for this device too, no prompt.
  try {
    const registration = await navigator.serviceWorker.getRegistration(SW.serviceWorkerUrl);
    if (Notification.permission === 'granted' && await registration?.pushManager.getSubscription()) {
      await run(true);
    }
  } catch (e) {
    note.textContent = e.message;
  }
  return { signOut: () => (state.on ? client.disableNotifications(SW).catch(() => {}) : Promise.resolve()) };
}
