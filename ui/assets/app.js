// minicp live page. Every second it reads minicp's own /debug endpoints
// and redraws four panels. Everything it shows comes from those answers:
// the decisions (would a watch be replayed, get 410, or wait?) are asked
// of the watch cache, not worked out here.
"use strict";

(function () {
  const REFRESH_MS = 1000;
  const TIMEOUT_MS = 4000;
  const SVG = "http://www.w3.org/2000/svg";

  const state = {
    paused: false,
    refreshes: 0,
    page: 0,
    filter: "",
    sort: "name",
    explain: null, // {resource, rv} once asked
    showEmpty: false, // the empty caches' rows are open
    seenEvents: new Set(),
    timer: null,
  };

  // ---- small helpers -------------------------------------------------

  const $ = (sel) => document.querySelector(sel);

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("data-")) e.setAttribute(k, v);
      else if (k === "title") e.title = v;
      else if (k === "style") e.style.cssText = v;
      else e.setAttribute(k, v);
    }
    for (const kid of kids.flat()) {
      if (kid === undefined || kid === null) continue;
      e.append(kid instanceof Node ? kid : String(kid));
    }
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function setText(sel, text) {
    const e = $(sel);
    if (e) e.textContent = text;
  }

  function bytes(n) {
    if (!(n > 0)) return "0 B";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
  }

  function secs(s) {
    if (s < 0) return "–";
    if (s < 10) return s.toFixed(1) + " s";
    if (s < 120) return Math.round(s) + " s";
    return Math.round(s / 60) + " min";
  }

  function gauge(fraction, cls) {
    const f = Math.max(0, Math.min(1, fraction));
    return el("span", { class: "gauge " + (cls || "") }, el("span", { style: `width:${(f * 100).toFixed(1)}%` }));
  }

  // LOGGED_OUT is what a 401 means here: the session cookie is gone.
  const LOGGED_OUT = "this browser is no longer logged in (its session expired, or minicp restarted): run `minictl ui` for a new login link, or open the page through kubectl proxy";

  // getJSON fetches one view. Failures become errors whose message says
  // what failed and, when minicp answered, what it said (its Status).
  async function getJSON(path) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
    try {
      let resp;
      try {
        resp = await fetch(path, { signal: ctl.signal, cache: "no-store" });
      } catch (e) {
        const why = e.name === "AbortError" ? `no answer within ${TIMEOUT_MS / 1000} s` : "could not connect";
        throw new Error(`GET ${path}: ${why}. Is minicp still running at ${location.host}?`);
      }
      const text = await resp.text();
      let body = null;
      try { body = JSON.parse(text); } catch (_) { /* reported below */ }
      if (resp.status === 401) {
        const e = new Error(`GET ${path}: 401: ${LOGGED_OUT}`);
        e.loggedOut = true;
        throw e;
      }
      if (!resp.ok) {
        const msg = body && body.message ? body.message : text.slice(0, 300);
        throw new Error(`GET ${path}: ${resp.status} ${resp.statusText || ""} ${msg}`.trim());
      }
      if (body === null) throw new Error(`GET ${path}: the answer is not JSON`);
      return body;
    } finally {
      clearTimeout(timer);
    }
  }

  // showErrors puts a panel's failures on top of it and greys out what
  // it still shows (the last good data) until the next success.
  function showErrors(panelID, errors) {
    const panel = document.getElementById(panelID);
    const box = panel.querySelector(".error");
    box.hidden = errors.length === 0;
    box.textContent = errors.map((e) => e.message).join("\n");
    panel.classList.toggle("stale", errors.length > 0);
  }

  // ---- panel 1: the revision axis -----------------------------------

  // cacheName splits a watch cache's resource ("events.events.k8s.io")
  // into its name and its API group ("core" for the core group's), so
  // that two kinds of the same name in two groups read apart.
  function cacheName(resource) {
    const dot = resource.indexOf(".");
    return dot < 0 ? { name: resource, group: "core" } : { name: resource.slice(0, dot), group: resource.slice(dot + 1) };
  }

  // isEmpty: a cache holding no object and no event, whose row would say
  // nothing but where its window starts. With 40-odd kinds most caches
  // are empty, so they are folded into one line a learner can open.
  function isEmpty(r) {
    return r.cached && r.objects === 0 && r.window.events === 0;
  }

  // byContent orders the resources as the page shows them: the caches
  // that hold something, then the uncached, then the empty ones; within
  // each, in /debug/watchcache's order, so rows do not move every second.
  function byContent(resources) {
    const full = resources.filter((r) => r.cached && !isEmpty(r));
    return [...full, ...resources.filter((r) => !r.cached), ...resources.filter(isEmpty)];
  }

  function foldLabel(n) {
    return `${state.showEmpty ? "▾" : "▸"} ${n} empty cache${n === 1 ? "" : "s"} (no objects, no events held): ${state.showEmpty ? "fold" : "show"}`;
  }

  function renderRevisions(etcd, wc) {
    setText("#etcd-revision", etcd.revision);
    setText("#etcd-compacted", etcd.compactedRevision || "never");
    setText("#etcd-history", `${etcd.revision - etcd.compactedRevision} revisions`);
    const resources = byContent(wc.resources);
    const empties = resources.filter(isEmpty).length;
    const body = $("#windows tbody");
    body.replaceChildren();
    for (const r of resources) {
      const { name, group } = cacheName(r.resource);
      const nameCell = (...flags) => el("td", { class: "res", title: r.resource }, el("span", { class: "name" }, name), " ", el("span", { class: "group" }, group), ...flags);
      if (!r.cached) {
        body.append(el("tr", { "data-resource": r.resource, "data-cached": "false" },
          nameCell(), el("td", { colspan: 6, class: "wrap" }, "not cached: every read and watch goes to etcd")));
        continue;
      }
      if (isEmpty(r) && body.querySelector("tr.fold") === null) {
        body.append(el("tr", { class: "fold" }, el("td", { colspan: 7 },
          el("button", { type: "button", class: "fold-toggle", "data-action": "toggle-empty", "aria-expanded": String(state.showEmpty) }, foldLabel(empties)))));
      }
      const w = r.window;
      body.append(el("tr", { "data-resource": r.resource, "data-cached": "true", "data-empty": String(isEmpty(r)), hidden: isEmpty(r) && !state.showEmpty },
        nameCell(r.paused ? " (paused)" : "", r.ready ? "" : " (listing)"),
        el("td", { "data-field": "floor" }, w.oldestResourceVersion),
        el("td", { "data-field": "rv" }, r.resourceVersion),
        el("td", { "data-field": "lag" }, r.lag || 0),
        el("td", { "data-field": "events" }, `${w.events} / ${w.capacity}`),
        el("td", { "data-field": "objects" }, r.objects),
        el("td", { "data-field": "watchers" }, r.watchers)));
    }
    fillResourceChoices(wc.resources);
    drawAxes(etcd, resources.filter((r) => r.cached));
  }

  function fillResourceChoices(resources) {
    const sel = $("#explain-resource");
    if (sel.options.length === resources.length) return;
    const keep = sel.value || "pods";
    sel.replaceChildren(...resources.map((r) => el("option", { value: r.resource }, r.resource)));
    sel.value = resources.some((r) => r.resource === keep) ? keep : resources[0].resource;
  }

  function probeRevision() {
    if (!state.explain) return null;
    const n = Number(state.explain.rv);
    return Number.isInteger(n) && n > 0 ? n : null;
  }

  // drawAxes draws one revision axis per etcd cluster: revisions count one
  // cluster's writes, so the events etcd (when events have their own)
  // gets its own axis and its own members, and its cache is drawn there.
  function drawAxes(etcd, rows) {
    const clusters = etcd.clusters && etcd.clusters.length ? etcd.clusters
      : [{ name: "main", resources: [], revision: etcd.revision, compactedRevision: etcd.compactedRevision, members: etcd.members }];
    const owner = new Map();
    for (const c of clusters.slice(1)) for (const r of c.resources) owner.set(r, c.name);
    const box = $("#axes");
    const blocks = clusters.map((c) => {
      let b = box.querySelector(`.cluster-axis[data-cluster="${c.name}"]`);
      if (!b) {
        b = el("div", { class: "cluster-axis", "data-cluster": c.name }, el("div", { class: "cluster-head" }));
        b.append(svg("svg", { class: "axis", role: "img", "aria-label": `revision axis of the ${c.name} etcd`, "data-cluster": c.name }));
      }
      return b;
    });
    box.replaceChildren(...blocks);
    clusters.forEach((c, i) => {
      const mine = rows.filter((r) => (owner.get(r.resource) || "main") === c.name);
      const zoomed = drawAxis(blocks[i].querySelector("svg"), c, mine);
      renderClusterHead(blocks[i].querySelector(".cluster-head"), c, clusters.length > 1, zoomed);
    });
  }

  // renderClusterHead names the cluster, what it holds and its members.
  function renderClusterHead(head, c, several, zoomed) {
    const title = c.name === "main" ? (several ? "main etcd (everything else)" : "etcd") : `${c.name} etcd (${c.resources.join(", ")})`;
    const members = c.members.map((m) => el("span", { class: "member" + (m.isLeader ? " leader" : "") + (m.running ? "" : " down"), "data-member": m.name, title: `member ${m.id} at ${m.clientURL}` },
      m.name + (m.isLeader ? " ★" : "") + (m.running ? "" : " (not running)")));
    head.replaceChildren(el("strong", {}, title), ` · revision ${c.revision}, compacted ${c.compactedRevision || "never"} · members: `,
      ...members.flatMap((m, i) => (i ? [", ", m] : [m])),
      zoomed ? el("span", { class: "zoom-note" }, ` · zoomed to ${zoomed.lo}–${zoomed.hi}: earlier revisions not to scale`) : "");
  }

  // focusOf is the revision range that matters on an axis: the compacted
  // revision, the events each window holds (a window holding none is
  // empty wherever it starts), the probed revision, and now.
  function focusOf(c, rows, probe) {
    const at = [c.revision];
    if (c.compactedRevision > 0) at.push(c.compactedRevision);
    for (const r of rows) {
      if (r.window.events > 0) at.push(r.window.firstEventResourceVersion - 1, r.resourceVersion);
    }
    if (probe !== null) at.push(probe);
    return [Math.min(...at), Math.max(...at)];
  }

  // LABEL_H is a label lane's height; labels are 11px text.
  const LABEL_H = 13;

  // drawAxis draws a cluster's history [compacted, current] and each
  // cache's window [floor, resourceVersion] on one revision scale, with the
  // events each window holds in a darker shade and the probed revision
  // dashed. When the history dwarfs what matters (focusOf spans less than a
  // fifth of it), or "zoom" is ticked, the scale starts near the focus and
  // what lies before it is drawn from the left edge. Labels never overlap:
  // each goes to the first lane above the axis where it fits. The caches
  // holding nothing share one line that opens them (isEmpty), but their
  // windows still set the scale, so opening it moves nothing. It returns
  // the zoomed range, or null.
  function drawAxis(axis, c, rows) {
    const width = Math.max(axis.clientWidth || 0, 400);
    const left = 200, right = 16, rowH = 20;
    axis.replaceChildren();
    const explained = state.explain && rows.some((r) => r.resource === state.explain.resource);
    const probe = explained ? probeRevision() : null;
    let lo = c.compactedRevision, hi = c.revision;
    for (const r of rows) {
      lo = Math.min(lo, r.window.oldestResourceVersion);
      hi = Math.max(hi, r.resourceVersion);
    }
    if (probe !== null) { lo = Math.min(lo, probe); hi = Math.max(hi, probe); }
    const full = lo;
    const [flo, fhi] = focusOf(c, rows, probe);
    hi = Math.max(hi, fhi);
    if ($("#zoom").checked) {
      // Zoomed by hand: from the oldest event any window holds.
      const held = rows.filter((r) => r.window.events > 0).map((r) => r.window.firstEventResourceVersion);
      if (held.length) lo = Math.max(lo, Math.min(...held) - 1);
    }
    if ((hi - flo) * 5 < hi - lo) lo = Math.max(lo, flo - Math.max(1, Math.ceil((hi - flo) * 0.05)));
    if (hi - lo < 10) lo = Math.max(0, hi - 10);
    const zoomed = lo > full ? { lo, hi } : null;
    axis.dataset.zoomed = zoomed ? "true" : "false";
    const span = Math.max(hi - lo, 1);
    const x = (rev) => left + ((Math.max(rev, lo) - lo) / span) * (width - left - right);

    // The labels above the axis, placed first: their lanes set the top.
    const marks = [
      { cls: "compacted-label", rev: c.compactedRevision, text: `compacted ${c.compactedRevision}`, anchor: "middle" },
      { cls: "current-label", rev: c.revision, text: `now ${c.revision}`, anchor: "end" },
    ];
    if (probe !== null) marks.push({ cls: "probe-label", rev: probe, text: `watch from ${probe}`, anchor: "start" });
    const lanes = placeLabels(axis, marks.map((m) => ({ ...m, x: x(m.rev) })), left, width);
    const top = 8 + lanes * LABEL_H + 6;
    // The lines under etcd's history: the caches holding something, then
    // one line standing for the empty ones, then those when it is open.
    const empties = rows.filter(isEmpty);
    const lines = rows.filter((r) => !isEmpty(r));
    if (empties.length) lines.push({ fold: empties.length }, ...(state.showEmpty ? empties : []));
    const bottom = top + (lines.length + 1) * rowH;
    const height = bottom + 22;
    axis.setAttribute("viewBox", `0 0 ${width} ${height}`);
    axis.setAttribute("height", height);
    for (const t of axis.querySelectorAll("text.mark")) t.setAttribute("y", top - 6 - Number(t.dataset.lane) * LABEL_H);

    drawTicks(axis, lo, hi, x, top, bottom, left, width - right);
    axis.append(rowLabel(axis, `${c.name === "main" ? "etcd" : c.name + " etcd"} history`, top + 13, left - 8));
    axis.append(svg("rect", { class: "etcd", x: x(c.compactedRevision), y: top, width: Math.max(x(c.revision) - x(c.compactedRevision), 2), height: rowH - 6 }));
    lines.forEach((r, i) => {
      const y = top + (i + 1) * rowH;
      if (r.fold) {
        const t = svg("text", { class: "fold-toggle", x: 0, y: y + 13, "data-action": "toggle-empty", role: "button" }, foldLabel(r.fold));
        axis.append(t);
        return;
      }
      const w = r.window;
      const { name, group } = cacheName(r.resource);
      axis.append(rowLabel(axis, `${name} (${group})`, y + 13, left - 8));
      axis.append(svg("rect", { class: "window", "data-resource": r.resource, x: x(w.oldestResourceVersion), y, width: Math.max(x(r.resourceVersion) - x(w.oldestResourceVersion), 2), height: rowH - 6 }));
      if (w.events > 0) {
        axis.append(svg("rect", { class: "held", "data-resource": r.resource, x: x(w.firstEventResourceVersion) - 1, y: y + 4, width: Math.max(x(w.lastEventResourceVersion) - x(w.firstEventResourceVersion), 0) + 2, height: rowH - 14 }));
      }
    });
    axis.append(svg("line", { class: "compacted", x1: x(c.compactedRevision), x2: x(c.compactedRevision), y1: top - 4, y2: bottom }));
    axis.append(svg("line", { class: "current", x1: x(c.revision), x2: x(c.revision), y1: top - 4, y2: bottom }));
    if (probe !== null) axis.append(svg("line", { class: "probe", x1: x(probe), x2: x(probe), y1: top - 4, y2: bottom }));
    return zoomed;
  }

  // placeLabels appends the labels (text elements of class "mark"), each
  // at its x with its anchor, kept inside [minX, maxX], in the first lane
  // where it overlaps no label placed before it (lane 0 is nearest the
  // axis). It returns the number of lanes used.
  function placeLabels(axis, labels, minX, maxX) {
    const lanes = []; // lanes[k]: the [x0, x1] intervals taken in lane k
    for (const l of labels) {
      const t = svg("text", { class: "mark " + l.cls, y: 0 }, l.text);
      axis.append(t);
      const w = t.getComputedTextLength() || l.text.length * 7;
      let x0 = l.anchor === "end" ? l.x - w : l.anchor === "middle" ? l.x - w / 2 : l.x;
      x0 = Math.max(0, Math.min(x0, maxX - w));
      const x1 = x0 + w;
      let k = 0;
      while (lanes[k] && lanes[k].some(([a, b]) => x0 < b + 6 && a < x1 + 6)) k++;
      (lanes[k] = lanes[k] || []).push([x0, x1]);
      t.setAttribute("x", x0);
      t.dataset.lane = k;
    }
    return Math.max(lanes.length, 1);
  }

  // drawTicks draws the revision ticks and, below the axis, the labels of
  // those that fit: a label that would touch the previous one is left out.
  function drawTicks(axis, lo, hi, x, top, bottom, minX, maxX) {
    const widest = String(hi).length * 7 + 16;
    const n = Math.max(2, Math.min(8, Math.floor((maxX - minX) / widest)));
    let lastEnd = -Infinity;
    for (const t of ticks(lo, hi, n)) {
      axis.append(svg("line", { class: "tick", x1: x(t), x2: x(t), y1: top - 4, y2: bottom }));
      const label = svg("text", { class: "tick-label", x: x(t), y: bottom + 14, "text-anchor": "middle" }, t);
      axis.append(label);
      const w = label.getComputedTextLength() || String(t).length * 7;
      if (x(t) - w / 2 < lastEnd + 6 || x(t) + w / 2 > maxX + 8) { label.remove(); continue; }
      lastEnd = x(t) + w / 2;
    }
  }

  // rowLabel is a row's name at the left, shortened with "…" to fit.
  function rowLabel(axis, text, y, maxWidth) {
    const t = svg("text", { class: "row-label", x: 0, y }, text);
    axis.append(t);
    let s = text;
    while (s.length > 4 && (t.getComputedTextLength() || s.length * 7) > maxWidth) {
      s = s.slice(0, -2);
      t.textContent = s + "…";
    }
    if (s !== text) t.append(svg("title", {}, text));
    return t;
  }

  function ticks(lo, hi, n) {
    const raw = (hi - lo) / n;
    const mag = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || mag * 10;
    const out = [];
    for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) out.push(t);
    return out;
  }

  // ---- the explainer: asked of the watch cache ----------------------

  // etcdNote says, from /debug/etcd's compacted revision, whether etcd
  // itself still holds the changes after rv (a watch from rv asks etcd for
  // revisions from rv+1, refused below the compacted revision).
  function etcdNote(rv, etcd) {
    const n = Number(rv);
    if (!etcd || !Number.isInteger(n) || n <= 0) return null;
    return n + 1 < etcd.compactedRevision
      ? `etcd is compacted to ${etcd.compactedRevision}: the same watch served by etcd (a resource without a cache) would get 410.`
      : `etcd still holds every change after ${n} (compacted to ${etcd.compactedRevision || "never"}).`;
  }

  async function refreshExplain(etcd) {
    const box = $("#explain-result");
    if (!state.explain) return;
    const { resource, rv } = state.explain;
    const path = `/debug/watchcache/${encodeURIComponent(resource)}/explain?resourceVersion=${encodeURIComponent(rv)}`;
    try {
      const ex = await getJSON(path);
      const verdicts = { replay: "replayed from the cache", expired: "410 Gone", wait: "waited on", state: "current state first", etcd: "served by etcd", "not-ready": "waits for the cache" };
      const parts = [el("span", { class: "verdict " + ex.outcome, "data-outcome": ex.outcome }, verdicts[ex.outcome] || ex.outcome), ex.why];
      if (ex.status) parts.push(el("div", { class: "note" }, `the client gets: ${ex.status.code} ${ex.status.reason}: "${ex.status.message}"`));
      const note = etcdNote(rv, etcd);
      if (note) parts.push(el("div", { class: "note", "data-field": "etcd-note" }, note));
      box.replaceChildren(...parts);
    } catch (e) {
      box.replaceChildren(el("div", { class: "error" }, e.message));
    }
  }

  // ---- panel 2: nodes and leases ------------------------------------

  function renderMembers(etcd) {
    // Every cluster's members: the main etcd's, then those of the etcd
    // holding events apart (its leader and term are its own).
    const clusters = etcd.clusters && etcd.clusters.length ? etcd.clusters : [{ name: "main", members: etcd.members }];
    const members = clusters.flatMap((c) => c.members.map((m) => ({ ...m, cluster: c.name })));
    const body = $("#members tbody");
    body.replaceChildren(...members.map((m) => el("tr", { "data-member": m.name, "data-cluster": m.cluster },
      el("td", { title: `member ${m.id} at ${m.clientURL}` }, m.name + (m.cluster === "main" ? "" : ` (${m.cluster})`)),
      el("td", { "data-field": "role", class: m.isLeader ? "ok" : (m.running ? "" : "bad") }, m.running ? (m.isLeader ? "★ leader" : "follower") : "not running"),
      el("td", { "data-field": "term" }, m.running ? m.raftTerm : "–"),
      el("td", {}, m.running ? m.revision : "–"),
      el("td", {}, m.running ? `${bytes(m.dbSize)} (in use ${bytes(m.dbSizeInUse)})` : "–"))));
    const cp = etcd.leaseCheckpoint;
    setText("#checkpoint", !cp ? "Lease checkpointing: not reported by an external etcd v3.5."
      : cp.enabled ? `Lease checkpointing is on (every ${cp.interval}): a new leader keeps the remaining TTL of leases with more than ${cp.interval} left.`
        : "Lease checkpointing is off: when the leader changes, every etcd lease's TTL starts again from its granted value. Watch the TTL column jump after a move-leader.");
  }

  function renderNodes(v) {
    setText("#nodes-total", v.total);
    setText("#nodes-ready", v.ready.True);
    setText("#nodes-notready", v.ready.False);
    setText("#nodes-unknown", v.ready.Unknown + v.ready.None);
    const grace = v.gracePeriodSeconds || v.ages.bucketSeconds * (v.ages.counts.length - 1);
    setText("#nodes-grace", v.controllerRunning ? secs(grace) : "no controller");
    setText("#nodes-age-head", `since last renewal (grace ${secs(grace)})`);
    drawAges(v.ages, grace);
    state.page = Math.min(state.page, v.pages - 1);
    setText("#nodes-page", `page ${v.page + 1} of ${v.pages} (${v.matching} nodes)`);
    $("#nodes-prev").disabled = v.page <= 0;
    $("#nodes-next").disabled = v.page >= v.pages - 1;
    const notes = [];
    if (!v.controllerRunning) notes.push("No node lifecycle controller runs in this minicp: nothing marks silent nodes Unknown; ages are drawn against upstream's 50 s grace period.");
    if (v.noLease > 0) notes.push(`${v.noLease} node(s) have no Lease in kube-node-lease.`);
    if (v.etcdLeaseError) notes.push(v.etcdLeaseError);
    setText("#nodes-note", notes.join(" "));

    const body = $("#nodes tbody");
    body.replaceChildren(...v.nodes.map((n) => {
      const age = n.secondsSinceRenewal;
      const frac = age < 0 ? 0 : age / grace;
      const cls = frac >= 1 ? "over" : frac >= 0.5 ? "late" : "";
      const readyCls = n.ready === "True" ? "ok" : n.ready === "False" ? "warn" : "bad";
      return el("tr", { "data-node": n.name },
        el("td", {}, n.name),
        el("td", { class: readyCls, title: (n.readyReason || "") + (n.unreachable ? "; tainted node.kubernetes.io/unreachable" : "") }, el("span", { "data-field": "ready" }, n.ready), n.unreachable ? " ⚠" : ""),
        el("td", { "data-field": "age", "data-seconds": age.toFixed(1), title: `grace period ${secs(grace)}` }, age < 0 ? "no Lease" : [gauge(frac, cls), secs(age)]),
        el("td", { title: n.leaseDurationSeconds ? `leaseDurationSeconds ${n.leaseDurationSeconds}: renewed every ${secs(n.leaseDurationSeconds / 4)}` : "" }, n.leaseDurationSeconds ? `${n.leaseDurationSeconds} s` : "–"),
        el("td", { "data-field": "etcd-lease" }, n.etcdLease ? n.etcdLease.id : age < 0 ? "–" : "plain key"),
        el("td", { "data-field": "ttl", "data-ttl": n.etcdLease ? n.etcdLease.ttl : "", "data-restarted": restarted(n) ? "true" : null }, age < 0 ? "–" : ttlCell(n.etcdLease), restarted(n) ? el("span", { class: "restarted", title: "more left than the granted TTL minus the time since the last renewal: etcd restarted this lease's countdown (a new leader, without lease checkpointing)" }, " ↻") : ""));
    }));
  }

  // restarted: the etcd lease has clearly more left than its granted TTL
  // minus the time since the node's last renewal (each renewal restarts
  // it), so something else restarted it: a leader change (M13).
  function restarted(n) {
    const l = n.etcdLease;
    return !!l && l.ttl > 0 && n.secondsSinceRenewal >= 0 && l.ttl > l.grantedTTL - n.secondsSinceRenewal + 3;
  }

  function ttlCell(l) {
    if (!l) return "no etcd lease";
    if (l.ttl < 0) return "expired: etcd deleted the key";
    return el("span", { title: `granted ${l.grantedTTL} s` }, gauge(l.ttl / Math.max(l.grantedTTL, 1), "ttl"), `${l.ttl} s`);
  }

  function drawAges(ages, grace) {
    const box = $("#ages");
    const maxCount = Math.max(1, ...ages.counts);
    const last = ages.counts.length - 1;
    box.replaceChildren(...ages.counts.map((c, i) => {
      const from = i * ages.bucketSeconds;
      const cls = i === last ? "col over" : from >= grace / 2 ? "col late" : "col";
      const label = i === last ? `${c} node(s) silent for the grace period or longer` : `${c} node(s) renewed ${secs(from)}–${secs(from + ages.bucketSeconds)} ago`;
      return el("div", { class: cls, style: `height:${(100 * c) / maxCount}%`, title: label });
    }));
    const axis = box.nextElementSibling && box.nextElementSibling.classList.contains("histogram-axis") ? box.nextElementSibling : null;
    const labels = el("div", { class: "histogram-axis" }, el("span", {}, "renewed just now"), el("span", {}, `grace period (${secs(grace)}) →`));
    if (axis) axis.replaceWith(labels); else box.after(labels);
  }

  // ---- panel 3: the event tape --------------------------------------

  function renderEvents(v) {
    const hide = $("#hide-leases").checked;
    const events = v.events.filter((e) => !(hide && e.resource === "leases.coordination.k8s.io"));
    const firstLoad = state.seenEvents.size === 0;
    const seen = new Set();
    const rows = events.map((e) => {
      const key = `${e.resourceVersion}/${e.resource}/${e.namespace || ""}/${e.name}`;
      seen.add(key);
      const fresh = !firstLoad && !state.seenEvents.has(key);
      return el("tr", { class: fresh ? "fresh" : "", "data-rv": e.resourceVersion },
        el("td", {}, e.resourceVersion),
        el("td", { class: "t-" + e.type }, e.type),
        el("td", {}, e.resource),
        el("td", {}, e.namespace ? `${e.namespace}/${e.name}` : e.name));
    });
    state.seenEvents = seen;
    $("#events tbody").replaceChildren(...rows);
    setText("#events-note", v.message || (events.length === 0 ? "No events held yet: write something (kubectl create ...)." : ""));
  }

  // ---- panel 4: load -------------------------------------------------

  function renderLoad(v) {
    setText("#load-window", v.windowSeconds > 0 ? `(over the last ${v.windowSeconds.toFixed(0)} s)` : "(measuring…)");
    const top = Math.max(1, ...v.requests.map((r) => r.perSecond));
    const reqs = [...v.requests].sort((a, b) => b.perSecond - a.perSecond || b.total - a.total);
    $("#verbs").replaceChildren(...(reqs.length ? reqs.map((r) => el("div", { class: "bar " + r.verb, "data-verb": r.verb },
      el("span", {}, r.verb),
      el("span", { class: "track" }, el("span", { class: "fill", style: `width:${((100 * r.perSecond) / top).toFixed(1)}%; display:block` })),
      el("span", { title: `${r.total} since start` }, `${r.perSecond.toFixed(1)} /s`))) : [el("p", { class: "note" }, "no API requests yet")]));
    $("#etcd-ops tbody").replaceChildren(...v.etcd.map((o) => el("tr", {},
      el("td", {}, o.operation),
      el("td", {}, o.perSecond.toFixed(1)),
      el("td", {}, o.p99Seconds < 0 ? "–" : `${(o.p99Seconds * 1000).toFixed(1)} ms`))));
  }

  function renderDatabase(etcd) {
    const bar = $("#db-bar");
    if (etcd.quotaBytes > 0) {
      const f = etcd.dbSize / etcd.quotaBytes;
      bar.style.width = `${Math.min(100, f * 100).toFixed(2)}%`;
      bar.className = "meter-fill" + (f >= 0.95 ? " full" : f >= 0.7 ? " high" : "");
      setText("#db-text", `${bytes(etcd.dbSize)} of the ${bytes(etcd.quotaBytes)} quota (${(f * 100).toFixed(2)}%); ${bytes(etcd.dbSizeInUse)} in use. Compaction frees pages inside the file; only a defragmentation gives them back.`);
    } else {
      bar.style.width = "0";
      setText("#db-text", `${bytes(etcd.dbSize)} (${bytes(etcd.dbSizeInUse)} in use); the quota is not reported by an external etcd v3.5 (its default is 2 GiB).`);
    }
    const list = $("#alarms");
    list.replaceChildren(...(etcd.alarms.length ? etcd.alarms.map((a) => el("li", {}, a + (a.startsWith("NOSPACE") ? ": etcd refuses writes; compact, defragment, then disarm" : "")))
      : [el("li", { class: "none" }, "none")]));
  }

  // ---- the refresh loop ---------------------------------------------

  function nodesPath() {
    const q = new URLSearchParams({ page: state.page, pageSize: 50, sort: state.sort });
    if (state.filter) q.set("ready", state.filter);
    return "/debug/nodes?" + q;
  }

  async function refresh() {
    const paths = ["/debug/etcd", "/debug/watchcache", nodesPath(), "/debug/events", "/debug/load"];
    const results = await Promise.allSettled(paths.map(getJSON));
    const [etcd, wc, nodes, events, load] = results.map((r) => (r.status === "fulfilled" ? r.value : null));
    const err = (i) => (results[i].status === "rejected" ? [results[i].reason] : []);

    const revErrors = [...err(0), ...err(1)];
    if (etcd && wc) renderRevisions(etcd, wc);
    await refreshExplain(etcd);
    showErrors("panel-revisions", revErrors);

    if (etcd) renderMembers(etcd);
    if (nodes) renderNodes(nodes);
    showErrors("panel-nodes", [...err(0), ...err(2)]);

    if (events) renderEvents(events);
    showErrors("panel-events", err(3));

    if (load) renderLoad(load);
    if (etcd) { renderDatabase(etcd); }
    showErrors("panel-load", [...err(4), ...err(0)]);

    const failed = results.filter((r) => r.status === "rejected").length;
    const banner = $("#banner");
    const loggedOut = results.some((r) => r.status === "rejected" && r.reason.loggedOut);
    banner.hidden = failed < results.length && !loggedOut;
    banner.textContent = loggedOut ? `minicp at ${location.host} answers, but ${LOGGED_OUT}.`
      : `minicp at ${location.host} is not answering; the page keeps trying every second. (${results[0].reason && results[0].reason.message})`;
    const pill = $("#refresh-state");
    pill.className = "pill " + (failed ? "bad" : "ok");
    pill.textContent = failed ? `${failed} of ${results.length} views failing` : `updated ${new Date().toLocaleTimeString()}`;
    state.refreshes++;
    document.body.dataset.refreshes = state.refreshes;
  }

  async function loop() {
    state.timer = null;
    if (!state.paused) {
      try {
        await refresh();
      } catch (e) {
        const banner = $("#banner");
        banner.hidden = false;
        banner.textContent = "The page failed to draw: " + e.message;
      }
    }
    state.timer = setTimeout(loop, REFRESH_MS);
  }

  function refreshNow() {
    if (state.timer !== null) { clearTimeout(state.timer); loop(); }
  }

  $("#pause").addEventListener("click", () => {
    state.paused = !state.paused;
    $("#pause").textContent = state.paused ? "Resume" : "Pause";
    setText("#refresh-state", state.paused ? "paused" : "resuming…");
  });
  $("#explain").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.explain = { resource: $("#explain-resource").value, rv: $("#explain-rv").value.trim() };
    refreshNow();
  });
  $("#nodes-filter").addEventListener("change", (ev) => { state.filter = ev.target.value; state.page = 0; refreshNow(); });
  $("#nodes-sort").addEventListener("change", (ev) => { state.sort = ev.target.value; state.page = 0; refreshNow(); });
  $("#nodes-prev").addEventListener("click", () => { state.page = Math.max(0, state.page - 1); refreshNow(); });
  $("#nodes-next").addEventListener("click", () => { state.page++; refreshNow(); });
  $("#hide-leases").addEventListener("change", refreshNow);
  $("#zoom").addEventListener("change", refreshNow);
  // The fold line of the empty caches, in the table and on each axis, is
  // drawn anew every second: one listener on the page serves them all.
  document.addEventListener("click", (ev) => {
    if (!ev.target.closest || !ev.target.closest('[data-action="toggle-empty"]')) return;
    state.showEmpty = !state.showEmpty;
    refreshNow();
  });

  loop();
})();
