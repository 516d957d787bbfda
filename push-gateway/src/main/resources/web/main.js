// The reference client: sign in, conversations, history with scroll-back, live entries over the WebSocket,
// send, read receipts, recall, create/add/leave groups, unread badges, mute and pin. State lives in memory; the
// server is the truth (the conversation list API for the list, history for messages, the socket for what happens
// next).
import { Api } from './api.js';
import { Connection } from './connection.js';

const $ = (id) => document.getElementById(id);
const session = JSON.parse(sessionStorage.getItem('im-session') || 'null');
let api, conn, me;
// id -> { id, group, peer, messages: Map(messageId -> msg), oldest, readUpTo, unread, muted, pinned, last, lastAt }
const conversations = new Map();
let current = null;

$('login-form').onsubmit = async (ev) => {
  ev.preventDefault();
  const user = $('login-user').value.trim();
  const device = 'web-' + Math.random().toString(36).slice(2, 8);
  try {
    const token = await Api.devToken(user, device);
    sessionStorage.setItem('im-session', JSON.stringify({ user, device, token }));
    start({ user, device, token });
  } catch (e) {
    $('login-error').textContent = e.message;
  }
};

$('logout').onclick = () => { sessionStorage.removeItem('im-session'); location.reload(); };

if (session) start(session);

async function start({ user, device, token }) {
  me = user;
  api = new Api(token);
  $('login').hidden = true;
  $('app').hidden = false;
  $('me').textContent = user;
  // The conversation list from the server (last message, unread, mute/pin), then live updates.
  await loadList();
  conn = new Connection(token, device, {
    entry: (e) => { apply(e, true); renderList(); if (current) renderMessages(); },
    status: (s) => { $('status').textContent = s; $('status').className = s === 'online' ? 'online' : ''; },
    sent: () => {},
    error: (f) => { $('conversation-error').textContent = f.error; },
  });
  conn.open();
}

// Every page of the list; the server's counts replace ours (a read on another device clears them there).
async function loadList() {
  try {
    let after;
    do {
      const page = await api.conversations(me, after);
      for (const item of page.conversations) {
        const c = conversation(item.conversationId);
        c.unread = c === current ? 0 : item.unread;
        c.muted = item.muted;
        c.pinned = item.pinned;
        c.member = item.member;
        c.last = item.last;
        c.lastAt = item.last ? item.last.timestamp : item.updatedAt;
      }
      after = page.next;
    } while (after);
  } catch (e) {
    $('conversation-error').textContent = e.message;
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
      readUpTo: -1, unread: 0, member: true, muted: false, pinned: false, last: null, lastAt: 0 });
  }
  return conversations.get(id);
}

// One sync entry (from the inbox or the socket) applied to the model.
function apply(e, live) {
  if (!e.conversationId || e.conversationId.startsWith('#')) return;
  const c = conversation(e.conversationId);
  switch (e.type) {
    case 'MESSAGE':
      c.messages.set(e.messageId, { seq: e.conversationSeq, id: e.messageId, sender: e.senderId, body: e.body,
        at: e.timestamp, recalled: false });
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
      if (live) $('conversation-error').textContent = e.reason;
      break;
    default:
  }
}

function renderList() {
  const ul = $('conversations');
  ul.replaceChildren();
  // Pinned first, then the most recent activity (the server's order).
  const sorted = [...conversations.values()].sort((a, b) => (b.pinned - a.pinned) || (b.lastAt - a.lastAt));
  for (const c of sorted) {
    const li = document.createElement('li');
    li.dataset.id = c.id;
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = (c.pinned ? '\u{1F4CC} ' : '') + (c.group ? '# ' + c.group : c.peer)
      + (c.member ? '' : ' (left)');
    li.append(name);
    if (c.unread) {
      const badge = document.createElement('span');
      badge.className = 'badge' + (c.muted ? ' muted' : '');
      badge.textContent = c.unread;
      li.append(badge);
    }
    const preview = document.createElement('div');
    preview.className = 'meta preview';
    preview.textContent = c.last ? (c.last.body === null ? '(recalled)' : c.last.body) : '';
    li.append(preview);
    li.append(toggle(c, 'pinned', c.pinned ? 'unpin' : 'pin'), toggle(c, 'muted', c.muted ? 'unmute' : 'mute'));
    li.className = (c === current ? 'active ' : '') + (c.unread && !c.muted ? 'unread ' : '')
      + (c.muted ? 'muted' : '');
    li.onclick = () => open(c);
    ul.append(li);
  }
}

// A mute/pin switch: the server publishes it to all of this user's devices (CONVERSATION_SETTINGS).
function toggle(c, flag, label) {
  const b = document.createElement('button');
  b.className = 'toggle ' + flag;
  b.textContent = label;
  b.onclick = (ev) => {
    ev.stopPropagation();
    c[flag] = !c[flag];
    renderList();
    api.settings(me, c.id, { [flag]: c[flag] }).catch((e) => { $('conversation-error').textContent = e.message; });
  };
  return b;
}

async function open(c) {
  current = c;
  c.unread = 0;
  $('conversation').hidden = false;
  $('title').textContent = c.group ? '# ' + c.group : c.peer;
  $('group-actions').hidden = !c.group;
  $('conversation-error').textContent = '';
  if (c.oldest === undefined) await older(c);
  renderList();
  renderMessages();
  markRead(c);
}

// Scroll-back: history is newest first, `next` is the `before` of the next older page.
async function older(c) {
  try {
    const page = await api.history(c.id, c.oldest);
    for (const m of page.entries) {
      if (m.type === 'MESSAGE' && !c.messages.has(m.messageId)) {
        c.messages.set(m.messageId, { seq: m.seq, id: m.messageId, sender: m.senderId, body: m.body,
          at: m.timestamp, recalled: false });
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
    $('conversation-error').textContent = e.message;
  }
}

$('older').onclick = async () => { if (current) { await older(current); renderMessages(); } };

function renderMessages() {
  const c = current;
  const ul = $('messages');
  ul.replaceChildren();
  const sorted = [...c.messages.values()].sort((a, b) => a.seq - b.seq);
  for (const m of sorted) {
    const li = document.createElement('li');
    li.dataset.messageId = m.id;
    li.className = (m.sender === me ? 'mine ' : '') + (m.recalled ? 'recalled' : '');
    const who = document.createElement('span');
    who.className = 'meta';
    who.textContent = m.sender;
    const body = document.createElement('span');
    body.className = 'body';
    body.textContent = m.recalled ? '(recalled)' : m.body;
    li.append(who, body);
    if (m.sender === me && !c.group && m.seq <= c.readUpTo) {
      const read = document.createElement('span');
      read.className = 'meta read';
      read.textContent = 'read';
      li.append(read);
    }
    if (m.sender === me && !m.recalled) {
      const recall = document.createElement('button');
      recall.textContent = 'recall';
      recall.className = 'recall';
      recall.onclick = () => api.recall(target(c), m.id).catch((e) => {
        $('conversation-error').textContent = e.message;
      });
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

$('composer').onsubmit = (ev) => {
  ev.preventDefault();
  const text = $('text').value;
  if (!current || !text) return;
  const frame = { type: 'send', ...target(current), body: text, clientMsgId: crypto.randomUUID() };
  if (!conn.send(frame)) {
    $('conversation-error').textContent = 'offline: not sent';
    return;
  }
  $('text').value = '';
};

$('new-chat').onsubmit = (ev) => {
  ev.preventDefault();
  const other = $('new-to').value.trim();
  const id = 'd:' + [me, other].sort().join(':');
  open(conversation(id));
};

$('group-button').onclick = async () => {
  const g = $('new-to').value.trim();
  if (!g) return;
  try {
    await api.join(g, me);
    open(conversation(g));
  } catch (e) {
    $('conversation-error').textContent = e.message;
  }
};

$('add-member').onclick = () => api.join(current.group, $('member').value.trim())
  .catch((e) => { $('conversation-error').textContent = e.message; });

$('leave').onclick = () => api.leave(current.group, me)
  .catch((e) => { $('conversation-error').textContent = e.message; });
