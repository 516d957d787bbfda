// The browser client: UI only. Everything the device protocol asks of a client (reconnect with backoff, cumulative
// ACKs, resume, dedupe by source + seq, send retries with one clientMsgId, token refresh) is the library's:
// @impipe/client (clients/js), served by the gateway at /lib/. The page keeps the conversations in memory; the
// server is the truth (the conversation list API for the list, history for messages, the socket for what happens
// next); the library's state (cursor, seen seqs) is kept in IndexedDB so a reload does not apply an entry twice.
import { ImClient } from '/lib/client.js';
import { HttpApi } from '/lib/http.js';
import { IndexedDbStore, MemoryStore } from '/lib/stores.js';
import { setUpNotifications } from '/app/notifications.js';

const $ = (id) => document.getElementById(id);
const session = JSON.parse(sessionStorage.getItem('im-session') || 'null');
let client, api, me, notifications;
// id -> { id, group, peer, messages: Map(messageId -> msg), oldest, readUpTo, unread, muted, pinned, last, lastAt }
const conversations = new Map();
let current = null;

const showError = (e) => { $('conversation-error').textContent = e?.error ?? e?.message ?? String(e); };

$('login-form').onsubmit = async (ev) => {
  ev.preventDefault();
  const user = $('login-user').value.trim();
  const device = 'web-' + Math.random().toString(36).slice(2, 8);
  try {
    const token = await HttpApi.devToken(location.origin, user, device);
    sessionStorage.setItem('im-session', JSON.stringify({ user, device, token }));
    start({ user, device, token });
  } catch (e) {
    $('login-error').textContent = e.error ?? e.message;
  }
};

$('logout').onclick = async () => {
  await notifications?.signOut();
  client?.close();
  sessionStorage.removeItem('im-session');
  location.reload();
};

if (session) start(session);

async function start({ user, device, token }) {
  me = user;
  $('login').hidden = true;
  $('app').hidden = false;
  $('me').textContent = user;
  let held = token;
  client = new ImClient({
    baseUrl: location.origin, user, device,
    // Local mode: a refused or expired token (close 4001, HTTP 401) is replaced by a new dev token.
    token: async ({ refresh }) => {
      if (refresh) {
        held = await HttpApi.devToken(location.origin, user, device);
        sessionStorage.setItem('im-session', JSON.stringify({ user, device, token: held }));
      }
      return held;
    },
    store: globalThis.indexedDB ? new IndexedDbStore(`${user}/${device}`) : new MemoryStore(),
  });
  api = client.http;
  client.on('status', showStatus);
  client.on('entry', (e) => { apply(e, true); renderList(); if (current) renderMessages(); });
  client.on('error', showError);
  await loadList();
  client.connect().catch(() => {}); // the status line says why
  notifications = await setUpNotifications(client, {
    openConversation: (id) => { const c = conversation(id); c.known = true; open(c); },
  });
}

function showStatus(s, detail) {
  const text = {
    online: 'online', synced: 'online', connecting: 'connecting…',
    offline: `offline (${detail?.code}${detail?.reason ? ': ' + detail.reason : ''})`,
    replaced: 'replaced by a newer tab: reload to reconnect', closed: 'signed out',
  }[s] ?? s;
  $('status').textContent = text;
  $('status').title = s === 'synced' ? 'up to date' : '';
  $('status').className = s === 'online' || s === 'synced' ? 'online' : '';
}

// Every page of the list; the server's counts replace ours (a read on another device clears them there).
async function loadList() {
  try {
    for (const item of await api.allConversations()) {
      const c = conversation(item.conversationId);
      c.known = true;
      c.unread = c === current ? 0 : item.unread;
      c.muted = item.muted;
      c.pinned = item.pinned;
      c.member = item.member;
      c.last = item.last;
      c.lastAt = item.last ? item.last.timestamp : item.updatedAt;
    }
  } catch (e) {
    showError(e);
  }
  renderList();
}

let reloading = null;
function reloadListSoon() {
  if (!reloading) reloading = setTimeout(() => { reloading = null; loadList(); }, 300);
}

function conversation(id) {
  if (!conversations.has(id)) {
    const direct = id.startsWith('d:');
    const peer = direct ? id.split(':').slice(1).find((u) => u !== me) || me : null;
    conversations.set(id, { id, group: direct ? null : id, peer, messages: new Map(), oldest: undefined,
      readUpTo: -1, unread: 0, member: true, muted: false, pinned: false, last: null, lastAt: 0, known: false });
  }
  return conversations.get(id);
}

function message(e, seq) {
  return { seq, id: e.messageId, sender: e.senderId, body: e.body, at: e.timestamp, recalled: e.body === null };
}

// One sync entry (from the socket) applied to the model.
function apply(e, live) {
  if (!e.conversationId || e.conversationId.startsWith('#')) return;
  const c = conversation(e.conversationId);
  c.known = true;
  switch (e.type) {
    case 'MESSAGE':
      c.messages.set(e.messageId, message(e, e.conversationSeq));
      if (live && e.senderId !== me && c !== current) c.unread++;
      c.last = { body: e.body, senderId: e.senderId, conversationSeq: e.conversationSeq };
      c.lastAt = Math.max(c.lastAt, e.timestamp);
      if (live && c === current && e.senderId !== me) markRead(c);
      break;
    case 'RECALL': {
      const m = c.messages.get(e.refMessageId);
      if (m) { m.recalled = true; m.body = null; }
      break;
    }
    case 'READ':
      if (e.senderId !== me) c.readUpTo = Math.max(c.readUpTo, e.readUpToSeq);
      else if (live) reloadListSoon(); // read on another device of mine: the server's count is the truth
      break;
    case 'CONVERSATION_SETTINGS':
      if (e.muted !== undefined && e.muted !== null) c.muted = e.muted;
      if (e.pinned !== undefined && e.pinned !== null) c.pinned = e.pinned;
      break;
    case 'CONVERSATION_JOINED': c.member = true; break;
    case 'CONVERSATION_LEFT': c.member = false; break;
    case 'REJECTED':
      if (live) showError(e.reason);
      break;
    default:
  }
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderList() {
  const ul = $('conversations');
  ul.replaceChildren();
  // Pinned first, then the most recent activity (the server's order).
  const sorted = [...conversations.values()].sort((a, b) => (b.pinned - a.pinned) || (b.lastAt - a.lastAt));
  for (const c of sorted) {
    const li = el('li', (c === current ? 'active ' : '') + (c.unread && !c.muted ? 'unread ' : '')
      + (c.muted ? 'muted' : ''));
    li.dataset.id = c.id;
    li.append(el('span', 'name', (c.pinned ? '\u{1F4CC} ' : '') + (c.group ? '# ' + c.group : c.peer)
      + (c.member ? '' : ' (left)')));
    li.append(c.unread ? el('span', 'badge' + (c.muted ? ' muted' : ''), String(c.unread)) : el('span'));
    li.append(el('div', 'preview', c.last ? (c.last.body === null ? '(recalled)' : c.last.body) : ''));
    const toggles = el('span', 'toggles');
    toggles.append(toggle(c, 'pinned', c.pinned ? 'unpin' : 'pin'), toggle(c, 'muted', c.muted ? 'unmute' : 'mute'));
    li.append(toggles);
    li.onclick = () => open(c);
    ul.append(li);
  }
  $('no-conversations').hidden = conversations.size > 0;
}

// A mute/pin switch: the server publishes it to all of this user's devices (CONVERSATION_SETTINGS).
function toggle(c, flag, label) {
  const b = el('button', 'toggle ' + flag, label);
  b.onclick = (ev) => {
    ev.stopPropagation();
    c[flag] = !c[flag];
    renderList();
    api.settings(c.id, { [flag]: c[flag] }).catch(showError);
  };
  return b;
}

async function open(c) {
  current = c;
  c.unread = 0;
  document.body.classList.add('in-conversation');
  $('placeholder').hidden = true;
  $('conversation').hidden = false;
  $('title').textContent = c.group ? '# ' + c.group : c.peer;
  $('group-actions').hidden = !c.group;
  $('conversation-error').textContent = '';
  // A conversation the server does not know yet (a new chat) has no history to ask for.
  if (c.oldest === undefined) {
    if (c.known) await older(c);
    else $('older').disabled = true;
  }
  renderList();
  renderMessages();
  markRead(c);
}

$('back').onclick = () => {
  current = null;
  document.body.classList.remove('in-conversation');
  $('conversation').hidden = true;
  $('placeholder').hidden = false;
  renderList();
};

// Scroll-back: history is newest first, `next` is the `before` of the next older page.
async function older(c) {
  try {
    const page = await api.history(c.id, { before: c.oldest });
    for (const m of page.entries) {
      if (m.type === 'MESSAGE' && !c.messages.has(m.messageId)) {
        c.messages.set(m.messageId, message(m, m.seq));
      } else if (m.type === 'RECALL') {
        const r = c.messages.get(m.refMessageId);
        if (r) { r.recalled = true; r.body = null; }
      } else if (m.type === 'READ' && m.senderId !== me) {
        c.readUpTo = Math.max(c.readUpTo, m.readUpToSeq);
      }
    }
    c.oldest = page.entries.length ? page.next : c.oldest ?? 0;
    $('older').disabled = !page.hasMore;
  } catch (e) {
    c.oldest = c.oldest ?? 0;
    showError(e);
  }
}

$('older').onclick = async () => { if (current) { await older(current); renderMessages(); } };

function renderMessages() {
  const c = current;
  const ul = $('messages');
  ul.replaceChildren();
  for (const m of [...c.messages.values()].sort((a, b) => a.seq - b.seq)) {
    const li = el('li', (m.sender === me ? 'mine ' : '') + (m.recalled ? 'recalled' : ''));
    li.dataset.messageId = m.id;
    li.append(el('span', 'meta', m.sender), el('span', 'body', m.recalled ? '(recalled)' : m.body));
    if (m.sender === me && !c.group && m.seq <= c.readUpTo) li.append(el('span', 'meta read', 'read'));
    if (m.sender === me && !m.recalled) {
      const recall = el('button', 'recall', 'recall');
      recall.onclick = () => api.recall(target(c), m.id).catch(showError);
      li.append(recall);
    }
    ul.append(li);
  }
  ul.scrollTop = ul.scrollHeight;
}

function target(c) { return c.group ? { groupId: c.group } : { to: c.peer }; }

// A read marker up to the newest message shown (a read receipt for direct chats).
function markRead(c) {
  const newest = Math.max(-1, ...[...c.messages.values()].filter((m) => m.sender !== me).map((m) => m.seq));
  if (newest > (c.myRead ?? -1)) {
    c.myRead = newest;
    api.read(target(c), newest).catch(() => {});
  }
}

// Sent over the socket; while offline the library holds it and sends it (same clientMsgId) once reconnected.
$('composer').onsubmit = (ev) => {
  ev.preventDefault();
  const text = $('text').value;
  if (!current || !text) return;
  $('text').value = '';
  client.send({ ...target(current), body: text }).catch(showError);
};

$('new-chat').onsubmit = (ev) => {
  ev.preventDefault();
  const other = $('new-to').value.trim();
  open(conversation('d:' + [me, other].sort().join(':')));
};

$('group-button').onclick = async () => {
  const g = $('new-to').value.trim();
  if (!g) return;
  try {
    await api.join(g);
    open(conversation(g));
  } catch (e) {
    showError(e);
  }
};

$('add-member').onclick = () => api.join(current.group, $('member').value.trim()).catch(showError);

$('leave').onclick = () => api.leave(current.group).catch(showError);
