// The browser client's service worker (served at /sw.js, scope /): shows the notifications the server pushes for
// messages this device did not receive in time (DESIGN "Notifications"), and opens the conversation when one is
// clicked. A classic script (module workers are not in every browser yet).
'use strict';

/**
 * What to show for a push message's data {notificationId, conversationId, conversationType, senderId, preview?,
 * seq, count, unreadTotal?}: the sender (direct) or the group as the title, the preview or "N new messages" as the
 * body, and the conversation as the tag so a newer notification replaces the older one of the same conversation.
 */
function notificationOf(data) {
  const count = Number(data.count) || 1;
  const group = data.conversationType === 'GROUP';
  const title = group ? '# ' + data.conversationId : data.senderId || 'New message';
  const body = data.preview ? (group && data.senderId ? data.senderId + ': ' : '') + data.preview
    : count === 1 ? '1 new message' : count + ' new messages';
  return {
    title,
    options: { body, tag: data.conversationId, renotify: true, data, timestamp: Date.now() },
  };
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let data;
  try {
    data = event.data ? event.data.json() : null;
  } catch (e) {
    data = null; // not JSON: still show something, browsers require a notification for every push
  }
  const n = data && data.conversationId ? notificationOf(data)
    : { title: 'im-pipeline', options: { body: 'New messages' } };
  event.waitUntil(self.registration.showNotification(n.title, n.options));
});

// Focus a tab of the client (and tell it which conversation to open) or open one at the conversation.
self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const conversationId = event.notification.data && event.notification.data.conversationId;
  const url = new URL(conversationId ? '/#c=' + encodeURIComponent(conversationId) : '/', self.location.origin).href;
  event.waitUntil(self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
    const page = windows.find((w) => new URL(w.url).origin === self.location.origin);
    if (page) {
      if (conversationId) {
        page.postMessage({ type: 'open-conversation', conversationId });
      }
      return page.focus();
    }
    return self.clients.openWindow(url);
  }));
});
