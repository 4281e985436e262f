// The program overview page (docs/merchants.md): plain DOM, the API of this origin, uPlot for the charts.
// Every number shown comes from one endpoint named next to it; nothing is computed here but formatting.
(() => {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const state = { programId: null, overview: null, workspaceId: null, charts: [], checklistTimer: null };

  async function api(method, path, body) {
    const res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json().catch(() => null);
    if (res.status === 401 && !path.startsWith("/api/auth/")) showLogin();
    return { status: res.status, json };
  }

  const errorText = (r) => (r.json && r.json.error && r.json.error.message) || `Error ${r.status}`;

  /** Minor units to an amount: the ISO 4217 exponent comes with the overview (Intl's CLDR digits differ for some codes). */
  function money(cents, currency) {
    const code = (currency || "usd").toUpperCase();
    const digits = state.overview ? state.overview.currencyExponent : 2;
    return new Intl.NumberFormat("en", { style: "currency", currency: code, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(cents / 10 ** digits);
  }
  const count = (n) => new Intl.NumberFormat("en").format(n);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const child of children) node.append(child);
    return node;
  }

  function announce(text) {
    $("action-status").textContent = text;
  }

  // ---- sign-in ----

  function showLogin() {
    clearInterval(state.checklistTimer);
    $("app").hidden = true;
    $("session").hidden = true;
    $("login").hidden = false;
  }

  async function showApp(me) {
    $("login").hidden = true;
    $("app").hidden = false;
    $("session").hidden = false;
    $("who").textContent = me.user.email;
    await loadPrograms(me.workspaces || []);
    if ($("program").value) await load();
  }

  /** The picker: every program of the user's workspaces; the URL's ?program= (or the last one shown) is selected. */
  async function loadPrograms(workspaces) {
    const select = $("program");
    select.replaceChildren();
    for (const w of workspaces) {
      const r = await api("GET", `/api/workspaces/${w.workspaceId}/programs?limit=100`);
      if (r.status !== 200 || !r.json || !Array.isArray(r.json.data)) continue;
      for (const p of r.json.data) select.append(el("option", { value: String(p.id), text: `${p.name} (#${p.id})` }));
    }
    const wanted = new URLSearchParams(location.search).get("program") || localStorage.getItem("programId");
    if (wanted && !select.querySelector(`option[value="${CSS.escape(wanted)}"]`)) select.append(el("option", { value: wanted, text: `Program #${wanted}` }));
    if (wanted) select.value = wanted;
  }

  // ---- the overview ----

  function query() {
    const params = new URLSearchParams();
    if ($("from").value) params.set("from", $("from").value);
    if ($("to").value) params.set("to", $("to").value);
    if ($("test").checked) params.set("test", "true");
    return params.toString();
  }

  async function load() {
    const id = $("program").value;
    if (!id) return;
    state.programId = id;
    localStorage.setItem("programId", id);
    $("nav-overview").href = `/dashboard?program=${encodeURIComponent(id)}`;
    $("nav-rewards").href = `/dashboard/rewards?program=${encodeURIComponent(id)}`;
    const r = await api("GET", `/api/programs/${encodeURIComponent(id)}/overview?${query()}`);
    if (r.status !== 200) {
      $("overview").hidden = true;
      $("app-error").textContent = errorText(r);
      return;
    }
    $("app-error").textContent = "";
    state.overview = r.json;
    state.workspaceId = r.json.workspaceId;
    $("overview").hidden = false;
    if (!$("from").value) $("from").value = r.json.from;
    if (!$("to").value) $("to").value = r.json.to;
    renderFigures(r.json);
    renderCharts(r.json);
    renderDaysTable(r.json);
    renderPartners(r.json);
    await Promise.all([loadPending(), loadBalances(), loadWithdrawals(), loadChecklist(), loadInbox()]);
    // The checklist follows an integration as it happens (test events arrive while the merchant watches).
    clearInterval(state.checklistTimer);
    state.checklistTimer = setInterval(loadChecklist, 5000);
  }

  function renderFigures(o) {
    $("period").textContent = `${o.from} to ${o.to}${o.test ? " (test data)" : ""}`;
    const t = o.totals;
    const cards = [
      ["Clicks", count(t.clicks)],
      ["Leads", count(t.leads)],
      ["Sales", count(t.sales)],
      ["Revenue", money(t.revenueCents, o.currency)],
      ["Commissions pending", money(t.pendingCents, o.currency)],
      ["Commissions credited", money(t.creditedCents, o.currency)],
      ["Commissions paid", money(t.paidCents, o.currency)],
      ["Reversed by refunds", money(t.reversedCents, o.currency)],
    ];
    $("figures").replaceChildren(
      ...cards.map(([label, value]) => el("div", { class: "figure", "data-figure": label }, el("span", { class: "value", text: value }), el("span", { class: "label", text: label }))),
    );
  }

  function renderCharts(o) {
    for (const chart of state.charts) chart.destroy();
    state.charts = [];
    const xs = o.days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const major = (cents) => cents / 10 ** o.currencyExponent;
    const width = () => Math.max(280, $("chart-activity").clientWidth || 600);
    const common = (title) => ({
      title,
      width: width(),
      height: 220,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      scales: { x: { time: true } },
      axes: [{ stroke: "#4d5661" }, { stroke: "#4d5661" }],
    });
    if (typeof uPlot === "function") {
      state.charts.push(
        new uPlot(
          {
            ...common("Clicks, leads and sales per day"),
            series: [{}, { label: "Clicks", stroke: "#0b57d0", width: 2 }, { label: "Leads", stroke: "#8a4b00", width: 2 }, { label: "Sales", stroke: "#116329", width: 2 }],
          },
          [xs, o.days.map((d) => d.clicks), o.days.map((d) => d.leads), o.days.map((d) => d.sales)],
          $("chart-activity"),
        ),
        new uPlot(
          {
            ...common(`Revenue and commissions per day (${o.currency.toUpperCase()})`),
            series: [{}, { label: "Revenue", stroke: "#0b57d0", width: 2 }, { label: "Commissions earned", stroke: "#116329", width: 2 }, { label: "Reversed", stroke: "#b42318", width: 2 }],
          },
          [
            xs,
            o.days.map((d) => major(d.revenueCents)),
            o.days.map((d) => major(d.pendingCents + d.creditedCents + d.paidCents + d.reversedCents)),
            o.days.map((d) => major(d.reversedCents)),
          ],
          $("chart-money"),
        ),
      );
    }
    // The charts are pictures: the same numbers in words and in the table below them, for screen readers and keyboards.
    const busiest = o.days.reduce((best, d) => (d.clicks > best.clicks ? d : best), o.days[0]);
    const t = o.totals;
    $("chart-summary").textContent =
      `From ${o.from} to ${o.to}: ${count(t.clicks)} clicks, ${count(t.leads)} leads, ${count(t.sales)} sales, revenue ${money(t.revenueCents, o.currency)}. ` +
      (busiest && busiest.clicks > 0 ? `Most clicks on ${busiest.date} (${count(busiest.clicks)}).` : "No clicks in this period.");
  }

  function renderDaysTable(o) {
    $("days-table")
      .querySelector("tbody")
      .replaceChildren(
        ...o.days.map((d) =>
          el(
            "tr",
            {},
            el("th", { scope: "row", text: d.date }),
            el("td", { class: "num", text: count(d.clicks) }),
            el("td", { class: "num", text: count(d.leads) }),
            el("td", { class: "num", text: count(d.sales) }),
            el("td", { class: "num", text: money(d.revenueCents, o.currency) }),
            el("td", { class: "num", text: money(d.pendingCents + d.creditedCents + d.paidCents + d.reversedCents, o.currency) }),
            el("td", { class: "num", text: money(d.reversedCents, o.currency) }),
          ),
        ),
      );
  }

  function figureCells(f, currency) {
    return [
      el("td", { class: "num", text: count(f.clicks) }),
      el("td", { class: "num", text: count(f.leads) }),
      el("td", { class: "num", text: count(f.sales) }),
      el("td", { class: "num", text: money(f.revenueCents, currency) }),
      el("td", { class: "num", text: money(f.pendingCents, currency) }),
      el("td", { class: "num", text: money(f.creditedCents, currency) }),
      el("td", { class: "num", text: money(f.paidCents, currency) }),
      el("td", { class: "num", text: money(f.reversedCents, currency) }),
    ];
  }

  function renderPartners(o) {
    const table = $("partners-table");
    table
      .querySelector("tbody")
      .replaceChildren(
        ...o.partners.map((p) =>
          el(
            "tr",
            { "data-partner": String(p.partnerId) },
            el("th", { scope: "row" }, `${p.name} `, el("span", { class: "muted", text: `(${p.referralCode})` })),
            ...figureCells(p, o.currency),
          ),
        ),
      );
    table.querySelector("tfoot").replaceChildren(el("tr", {}, el("th", { scope: "row", text: "Total" }), ...figureCells(o.totals, o.currency)));
    $("partners-note").textContent = o.partners.length
      ? o.partnersWithActivity > o.partners.length
        ? `The ${o.partners.length} partners with the most revenue of ${o.partnersWithActivity}.`
        : ""
      : "No partner activity in this period.";
  }

  // ---- partners waiting for approval ----

  async function loadPending() {
    const r = await api("GET", `/api/programs/${state.programId}/partners?status=pending&limit=100`);
    const list = $("pending-list");
    if (r.status !== 200) {
      list.replaceChildren(el("li", { class: "bad", text: errorText(r) }));
      return;
    }
    $("pending-empty").hidden = r.json.data.length > 0;
    list.replaceChildren(
      ...r.json.data.map((p) => {
        const approve = el("button", { type: "button", "aria-label": `Approve ${p.name}` }, "Approve");
        const decline = el("button", { type: "button", class: "secondary", "aria-label": `Decline ${p.name}` }, "Decline");
        approve.addEventListener("click", () => decide(p, "approve"));
        decline.addEventListener("click", () => decide(p, "decline"));
        return el(
          "li",
          { "data-partner": String(p.partnerId) },
          el(
            "span",
            {},
            el("strong", { text: p.name }),
            " ",
            el("span", { class: "muted", text: `${p.email || "no email"} · code ${p.referralCode} · applied ${p.enrolledAt.slice(0, 10)}` }),
          ),
          el("span", { class: "actions" }, approve, decline),
        );
      }),
    );
  }

  async function decide(partner, decision) {
    const r = await api("POST", `/api/programs/${state.programId}/partners/${partner.partnerId}/${decision}`);
    if (r.status !== 200) {
      $("app-error").textContent = errorText(r);
      return;
    }
    announce(`${partner.name} ${r.json.status}.`);
    await loadPending();
    // Keep the keyboard in the list: on the next partner's first button, else on the section's heading.
    const next = $("pending-list").querySelector("button");
    (next || $("pending-title")).focus();
  }

  // ---- balances and withdrawals ----

  async function loadBalances() {
    const r = await api("GET", `/api/programs/${state.programId}/partners?status=approved&limit=100`);
    const currency = state.overview.currency;
    const rows = r.status === 200 ? r.json.data.filter((p) => p.totals.balanceCents !== 0) : [];
    $("balances-empty").hidden = rows.length > 0;
    $("balances-table")
      .querySelector("tbody")
      .replaceChildren(
        ...rows.map((p) => {
          const action = el("td", {});
          if (p.totals.balanceCents > 0) {
            const button = el("button", { type: "button", "aria-label": `Create withdrawal for ${p.name}` }, "Create withdrawal");
            button.addEventListener("click", () => createWithdrawal(p, button));
            action.append(button);
          } else {
            // A negative balance: a refund after payout took back more than was left (see the warnings below).
            action.append(el("span", { class: "muted", text: "Nothing to withdraw" }));
          }
          return el(
            "tr",
            { "data-partner": String(p.partnerId) },
            el("th", { scope: "row", text: p.name }),
            el("td", { class: "num", text: money(p.totals.balanceCents, currency) }),
            action,
          );
        }),
      );
  }

  async function createWithdrawal(partner, button) {
    button.disabled = true;
    // One key per press: a retry of the same press cannot open a second withdrawal.
    const idempotencyKey = `dashboard-${partner.partnerId}-${crypto.randomUUID()}`;
    const r = await api("POST", `/api/programs/${state.programId}/partners/${partner.partnerId}/withdrawals`, { idempotencyKey });
    if (r.status !== 200) {
      $("app-error").textContent = errorText(r);
      button.disabled = false;
      return;
    }
    announce(`Withdrawal ${r.json.id} of ${money(r.json.amountCents, r.json.currency)} created for ${partner.name}.`);
    await Promise.all([loadBalances(), loadWithdrawals()]);
    const pay = $("withdrawals-table").querySelector(`tr[data-withdrawal="${r.json.id}"] button`);
    if (pay) pay.focus();
  }

  async function loadWithdrawals() {
    const [w, partners] = await Promise.all([api("GET", `/api/programs/${state.programId}/withdrawals?limit=50`), api("GET", `/api/programs/${state.programId}/partners?limit=100`)]);
    const names = new Map(partners.status === 200 ? partners.json.data.map((p) => [p.partnerId, p.name]) : []);
    const rows = w.status === 200 && Array.isArray(w.json.data) ? w.json.data : [];
    $("withdrawals-empty").hidden = rows.length > 0;
    $("withdrawals-table")
      .querySelector("tbody")
      .replaceChildren(
        ...rows.map((x) => {
          const action = el("td", {});
          if (x.status === "open") {
            const pay = el("button", { type: "button", "aria-label": `Mark withdrawal ${x.id} paid` }, "Mark paid");
            pay.addEventListener("click", () => markPaid(x, pay));
            action.append(pay);
          }
          return el(
            "tr",
            { "data-withdrawal": String(x.id) },
            el("th", { scope: "row", text: `#${x.id} · ${String(x.createdAt).slice(0, 10)}` }),
            el("td", { text: names.get(x.partnerId) || `Partner ${x.partnerId}` }),
            el("td", { class: "num", text: money(x.amountCents, x.currency) }),
            el("td", { class: "state", text: x.status }),
            action,
          );
        }),
      );
  }

  async function markPaid(withdrawal, button) {
    button.disabled = true;
    const r = await api("POST", `/api/programs/${state.programId}/withdrawals/${withdrawal.id}/pay`);
    if (r.status !== 200) {
      $("app-error").textContent = errorText(r);
      button.disabled = false;
      return;
    }
    announce(`Withdrawal ${withdrawal.id} marked paid.`);
    await Promise.all([loadWithdrawals(), loadBalances()]);
    $("balances-title").focus();
  }

  // ---- the integration checklist (the status endpoint) ----

  function describeEvents(stats) {
    if (!stats.hasTestEvents) return "No test event yet.";
    const n = stats.testEventCount >= 10 ? "10 or more" : String(stats.testEventCount);
    return `${n} test event(s); latest at ${new Date(stats.latestTestEvent.timestamp).toISOString().replace("T", " ").slice(0, 16)} UTC.`;
  }

  async function loadChecklist() {
    const r = await api("GET", `/api/tracking/status/${state.programId}`);
    if (r.status !== 200) {
      $("checklist-partners").textContent = errorText(r);
      return;
    }
    const data = r.json.data;
    const payments = data.statistics.payments;
    const details = {
      pageview: describeEvents(data.statistics.pageview),
      referrals: describeEvents(data.statistics.referrals),
      payments: payments.methodReady
        ? payments.paymentTrackingMode === "s2s"
          ? "Server-side sale tracking."
          : "Processor connected."
        : `Processor ${payments.processorConnectionStatus.replace(/_/g, " ")}.`,
    };
    for (const li of document.querySelectorAll("li.step")) {
      const step = li.dataset.step;
      const badge = li.querySelector(".badge");
      badge.textContent = data.stepStatuses[step];
      badge.className = `badge ${data.stepStatuses[step] === "complete" ? "ok" : "warn"}`;
      li.querySelector(".detail").textContent = details[step];
    }
    $("checklist-partners").textContent = data.hasPartners ? "at least one approved" : "none approved yet";
  }

  // ---- the notifications inbox ----

  async function loadInbox() {
    const list = $("inbox");
    if (!state.workspaceId) {
      list.replaceChildren();
      $("inbox-empty").hidden = false;
      return;
    }
    const r = await api("GET", `/api/workspaces/${state.workspaceId}/notifications?limit=20`);
    if (r.status !== 200) {
      list.replaceChildren(el("li", { class: "bad", text: errorText(r) }));
      return;
    }
    const u = r.json.unread;
    $("unread").textContent = `(${u.total} unread: ${u.advertiser_warning} warning(s), ${u.partner_notice} partner notice(s))`;
    $("inbox-empty").hidden = r.json.data.length > 0;
    list.replaceChildren(
      ...r.json.data.map((n) => {
        const warning = n.kind === "advertiser_warning";
        const text = warning
          ? `Manual review: ${n.reason} on ${n.transactionId} after partner ${n.partnerId} was paid; ${money(n.deductionCents, n.currency)} to recover.`
          : `Partner ${n.partnerId}: commission ${n.commissionId} ${n.status} (${n.reason}), ${money(n.deductionCents, n.currency)} deducted.`;
        const item = el(
          "li",
          { "data-notification": String(n.id), class: n.readAt ? "" : "unread" },
          el("span", {}, el("span", { class: `badge ${warning ? "bad" : "muted"}`, text: warning ? "Warning" : "Notice" }), " ", text),
        );
        if (!n.readAt) {
          const read = el("button", { type: "button", class: "secondary", "aria-label": `Mark notification ${n.id} read` }, "Mark read");
          read.addEventListener("click", async () => {
            const res = await api("POST", `/api/workspaces/${state.workspaceId}/notifications/${n.id}/read`);
            if (res.status !== 200) {
              $("app-error").textContent = errorText(res);
              return;
            }
            announce(`Notification ${n.id} marked read.`);
            await loadInbox();
            $("inbox-title").focus();
          });
          item.append(el("span", { class: "actions" }, read));
        }
        return item;
      }),
    );
  }

  // ---- wiring ----

  for (const id of ["pending-title", "balances-title", "inbox-title"]) $(id).tabIndex = -1;

  $("login").addEventListener("submit", async (e) => {
    e.preventDefault();
    const r = await api("POST", "/api/auth/login", { email: $("email").value, password: $("password").value });
    if (r.status !== 200) {
      $("login-error").textContent = errorText(r);
      return;
    }
    $("login-error").textContent = "";
    const me = await api("GET", "/api/auth/me");
    await showApp(me.json);
  });
  $("pick").addEventListener("submit", (e) => {
    e.preventDefault();
    load();
  });
  $("logout").addEventListener("click", async () => {
    await api("POST", "/api/auth/logout");
    showLogin();
  });
  window.addEventListener("resize", () => {
    const width = Math.max(280, $("chart-activity").clientWidth || 600);
    for (const chart of state.charts) chart.setSize({ width, height: 220 });
  });

  api("GET", "/api/auth/me").then((r) => (r.status === 200 ? showApp(r.json) : showLogin()));
})();
