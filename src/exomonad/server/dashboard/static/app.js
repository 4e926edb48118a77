// ExoMonad dashboard: one snapshot (api/status), then live events (api/events).
// Every text from the server is set with textContent, never parsed as HTML.
"use strict";

(() => {
  const TIMELINE_MAX = 500; // entries kept per team
  const REFRESH_EVERY = 5000; // ms: the user inbox also changes without events
  const KINDS = ["message_in", "message_out", "delivery", "delivery_failed", "presence",
    "policy_decision", "escalation", "escalation_answered", "task"];
  // Events after which the snapshot (members, tasks, approvals, user inbox) is re-read.
  const REFRESHING = new Set(["message_out", "delivery", "delivery_failed", "presence",
    "escalation", "escalation_answered", "task"]);

  const teams = new Map(); // team name -> its elements
  let refreshTimer = null;
  let refreshing = false;

  // -- small helpers -------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "data") Object.assign(node.dataset, value);
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child !== null && child !== undefined) {
        node.append(typeof child === "string" ? document.createTextNode(child) : child);
      }
    }
    return node;
  }

  // -- visible: begin
  // Characters a browser acts on or draws as nothing (controls, bidi overrides,
  // zero-width and other format characters, unassigned and private use, every space but
  // the ASCII one, Hangul fillers, the Braille blank, variation selectors...), written as
  // escapes: a person approves what they read. The rule of util.display.visible for the
  // terminal, escape for escape (tests/util/test_display.py runs one table through both).
  const HIDDEN = new RegExp("(?! )[\\p{Cc}\\p{Cf}\\p{Zl}\\p{Zp}\\p{Zs}\\p{Cs}\\p{Cn}\\p{Co}\\u034f\\u115f"
    + "\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u2800\\u3164\\ufe00-\\ufe0f\\uffa0\\u{e0100}-\\u{e01ef}]", "gu");
  function visible(text) {
    return String(text).replace(HIDDEN, (c) => {
      const code = c.codePointAt(0);
      const hex = code.toString(16);
      if (c === "\n") return "\\n";
      if (code < 0x100) return `\\x${hex.padStart(2, "0")}`;
      return code < 0x10000 ? `\\u${hex.padStart(4, "0")}` : `\\U${hex.padStart(8, "0")}`;
    });
  }
  // -- visible: end

  function clock(seconds) {
    const d = seconds ? new Date(seconds * 1000) : new Date();
    return d.toTimeString().slice(0, 8);
  }

  function notice(text) {
    const p = document.getElementById("notice");
    p.textContent = text;
    p.hidden = !text;
  }

  async function api(path, body) {
    const init = body === undefined ? {} : {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    };
    const response = await fetch(path, init);
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
    return data;
  }

  // Keep one element per key under `parent`, in `items` order; `make` builds a new one,
  // `update` refreshes one. Elements already in place are not moved (a form being
  // typed into keeps its focus and text).
  function keyed(parent, items, key, make, update) {
    const old = new Map([...parent.children].map((c) => [c.dataset.key, c]));
    const keep = new Set();
    items.forEach((item, i) => {
      const k = String(key(item));
      let node = old.get(k);
      if (!node) {
        node = make(item);
        node.dataset.key = k;
      }
      keep.add(node);
      if (update) update(node, item);
      const here = parent.children[i];
      if (here !== node) parent.insertBefore(node, here || null);
    });
    for (const node of old.values()) if (!keep.has(node)) node.remove();
  }

  // -- teams ---------------------------------------------------------------------
  function team(name) {
    let t = teams.get(name);
    if (t) return t;
    const members = el("ul", { class: "members" });
    const tasks = el("ul", { class: "tasks" });
    const timeline = el("ol", { class: "timeline" });
    const section = el("section", { class: "team", data: { team: name } },
      el("h2", { text: `Team ${name}` }),
      el("div", { class: "team-body" },
        el("div", {}, el("h3", { text: "Members" }), members),
        el("div", {}, el("h3", { text: "Tasks" }), tasks),
        el("div", {}, el("h3", { text: "Timeline" }), timeline)));
    document.getElementById("teams").append(section);
    t = { section, members, tasks, timeline, title: section.querySelector("h2") };
    teams.set(name, t);
    return t;
  }

  function renderMembers(t, doc) {
    keyed(t.members, doc.members || [], (m) => m.name, (m) => {
      const li = el("li", { data: { member: m.name } },
        el("span", { class: "dot" }), el("span", { class: "name", text: m.name }),
        el("span", { class: "meta" }));
      return li;
    }, (li, m) => {
      const dot = li.querySelector(".dot");
      dot.dataset.presence = m.presence;
      dot.title = m.presence;
      li.dataset.presence = m.presence;
      const bits = [m.presence, m.runtime, m.kind === m.runtime ? null : m.kind];
      if (m.name === doc.lead) bits.push("lead");
      if (m.unread) bits.push(`${m.unread} unread`);
      if (m.branch) bits.push(m.branch);
      if (m.pullRequest) bits.push(`PR ${m.pullRequest.summary}`);
      li.querySelector(".meta").textContent = bits.filter(Boolean).join(" · ");
    });
  }

  function renderTasks(t, tasks) {
    if (!tasks.length) {
      t.tasks.replaceChildren(el("li", { class: "empty", text: "no tasks" }));
      return;
    }
    t.tasks.replaceChildren(...tasks.map((task) => el("li", { data: { task: task.id } },
      el("span", { text: `#${task.id} ${task.subject}` }),
      el("span", { class: "meta", text: [task.status, task.owner].filter(Boolean).join(" · ") }))));
  }

  // -- approvals -----------------------------------------------------------------
  function approvalItem(a) {
    const reason = el("input", { type: "text", name: "reason", placeholder: "reason (shown to the agent)" });
    const approve = el("button", { type: "button", class: "approve", text: "Approve" });
    const deny = el("button", { type: "button", class: "deny", text: "Deny" });
    const error = el("p", { class: "error" });
    const answer = async (yes) => {
      approve.disabled = deny.disabled = true;
      try {
        await api(`api/approvals/${encodeURIComponent(a.id)}`, { approve: yes, reason: reason.value });
        li.dataset.state = yes ? "approved" : "denied";
        error.textContent = "";
        scheduleRefresh();
      } catch (exc) {
        error.textContent = String(exc.message || exc);
        approve.disabled = deny.disabled = false;
      }
    };
    approve.addEventListener("click", () => answer(true));
    deny.addEventListener("click", () => answer(false));
    const li = el("li", { data: { approval: a.id, state: "pending" } },
      el("div", {}, el("strong", { text: a.id }),
        el("span", { class: "meta",
          text: visible(`${a.agent} (${a.role}) asks ${a.addressee || "human"}`) }),
        el("span", { class: "meta expires" })),
      el("p", { class: "what", text: visible(a.reason) }),
      // Whole: a cut could hide the part that matters (a delete after a long install).
      el("p", { class: "action", text: visible(JSON.stringify(a.action)) }),
      el("form", { class: "answer" }, reason, approve, deny), error);
    return li;
  }

  function renderApprovals(list) {
    document.getElementById("approvals-empty").hidden = list.length > 0;
    keyed(document.getElementById("approvals"), list, (a) => a.id, approvalItem, (li, a) => {
      const left = a.deadline ? Math.max(0, Math.round(a.deadline - Date.now() / 1000)) : null;
      li.querySelector(".expires").textContent = left === null ? "" : `expires in ${left}s`;
    });
  }

  // -- messages to the user ------------------------------------------------------
  function messageId(m) {
    return m.msg_id || m.messageId || `${m.from}|${m.timestamp}`;
  }

  function userItem(entry) {
    const m = entry.message;
    const text = el("textarea", { name: "reply", placeholder: `reply to ${m.from}` });
    const send = el("button", { type: "button", class: "send", text: "Reply" });
    const status = el("p", { class: "meta" });
    send.addEventListener("click", async () => {
      if (!text.value.trim()) return;
      send.disabled = true;
      try {
        await api("api/reply", { team: entry.team, to: m.from, text: text.value });
        text.value = "";
        status.textContent = `sent to ${m.from}`;
        status.className = "meta";
      } catch (exc) {
        status.textContent = String(exc.message || exc);
        status.className = "error";
      }
      send.disabled = false;
    });
    return el("li", { data: { from: m.from, team: entry.team } },
      el("div", {}, el("strong", { text: m.from }),
        el("span", { class: "meta", text: `${entry.team} · ${m.timestamp || ""}${m.read ? " · read" : ""}` })),
      el("p", { class: "text", text: m.summary ? `${m.summary}\n${m.text}` : String(m.text) }),
      el("form", { class: "reply" }, text, send), status);
  }

  function renderUserInbox(docs) {
    const all = [];
    for (const doc of docs) {
      for (const message of doc.user_inbox || []) all.push({ team: doc.name, message });
    }
    all.reverse(); // newest first
    document.getElementById("user-empty").hidden = all.length > 0;
    keyed(document.getElementById("user-inbox"), all,
      (e) => `${e.team}/${messageId(e.message)}`, userItem);
  }

  // -- the snapshot --------------------------------------------------------------
  function renderStatus(doc) {
    const policy = doc.policy || {};
    document.getElementById("policy").textContent = policy.error
      ? `policy error: ${policy.error}` : `policy ${policy.policy_id || "?"}`;
    document.getElementById("seq").textContent = `seq ${doc.seq}`;
    for (const t of doc.teams) {
      const view = team(t.name);
      view.title.textContent = `Team ${t.name}${t.current ? " (current)" : ""}`;
      if (t.error) {
        view.members.replaceChildren(el("li", { class: "error", text: t.error }));
        continue;
      }
      renderMembers(view, t);
      renderTasks(view, t.tasks || []);
    }
    renderApprovals(doc.approvals || []);
    renderUserInbox(doc.teams.filter((t) => !t.error));
  }

  async function refresh() {
    if (refreshing) return scheduleRefresh();
    refreshing = true;
    try {
      renderStatus(await api("api/status"));
      notice("");
    } catch (exc) {
      notice(`cannot read the status: ${exc.message || exc}`);
    } finally {
      refreshing = false;
    }
  }

  function scheduleRefresh() {
    if (refreshTimer === null) {
      refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 200);
    }
  }

  // -- the timeline --------------------------------------------------------------
  function body(m) {
    return m.protocol ? `[${m.protocol}]` : (m.summary || m.text);
  }

  function describe(ev) {
    switch (ev.kind) {
      case "message_in": return `${ev.sender} → ${ev.to}: ${body(ev)}`;
      case "message_out":
        return `${ev.sender} → ${ev.to}${ev.via === "pane" ? " (typed)" : ""}: ${body(ev)}`;
      case "delivery": return `${ev.message_ids.length} delivered to ${ev.member}` +
        (ev.consumed ? ` (${ev.consumed} consumed)` : "");
      case "delivery_failed": return `${ev.member}: ${ev.reason} (${ev.pending} waiting)`;
      case "presence": return `${ev.member}: ${ev.previous || "?"} → ${ev.state} (${ev.source})`;
      case "policy_decision":
        return `${ev.agent} ${ev.tool}: ${ev.decision}${ev.reason ? ` — ${ev.reason}` : ""}`;
      case "escalation": return `${ev.agent} ${ev.tool} asks ${ev.addressee}: ${ev.reason} [${ev.approval_id}]`;
      case "escalation_answered":
        return `[${ev.approval_id}] ${ev.state}${ev.by ? ` by ${ev.by}` : ""} → ${ev.decision}` +
          (ev.reason ? `: ${ev.reason}` : "");
      case "task": {
        const task = ev.task || {};
        return `${ev.by} ${ev.action} #${task.id} ${task.subject || ""} [${task.status || ""}]`;
      }
      default: return JSON.stringify(ev);
    }
  }

  function addToTimeline(teamName, kind, seq, ts, text) {
    const t = team(teamName);
    const li = el("li", { data: { kind, seq: String(seq), at: String(Date.now()) } },
      el("time", { text: clock(ts) }), el("span", { class: "kind", text: kind }),
      el("span", { class: "what", text }));
    t.timeline.prepend(li);
    while (t.timeline.children.length > TIMELINE_MAX) t.timeline.lastElementChild.remove();
  }

  function onEvent(message) {
    let ev;
    try { ev = JSON.parse(message.data); } catch { return; }
    const teamName = ev.team || "(no team)";
    if (!teams.has(teamName)) scheduleRefresh();
    addToTimeline(teamName, ev.kind, ev.seq, ev.ts, describe(ev));
    document.getElementById("seq").textContent = `seq ${ev.seq}`;
    if (REFRESHING.has(ev.kind)) scheduleRefresh();
  }

  function follow() {
    // Replay what the server kept, then live; a reconnect resumes at Last-Event-ID.
    const source = new EventSource("api/events?since=0");
    const conn = document.getElementById("conn");
    source.addEventListener("open", () => { conn.dataset.state = "live"; conn.textContent = "live"; });
    source.addEventListener("error", () => {
      conn.dataset.state = "reconnecting";
      conn.textContent = "reconnecting";
    });
    for (const kind of KINDS) source.addEventListener(kind, onEvent);
    source.addEventListener("gap", (message) => {
      let gap = {};
      try { gap = JSON.parse(message.data); } catch { /* shown as is */ }
      for (const name of teams.keys()) {
        addToTimeline(name, "gap", "", 0, `${gap.missed} event(s) missed after ${gap.after}`);
      }
      scheduleRefresh();
    });
  }

  refresh();
  follow();
  setInterval(refresh, REFRESH_EVERY);
})();
