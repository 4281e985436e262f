// The Rewards screen (docs/merchants.md, docs/rewards.md): a program's partner groups with their rewards and partners;
// create a group, create or edit a reward with a live preview, move a partner. Plain DOM, the API of this origin;
// every text the user or the API wrote is set with textContent, never parsed as HTML.
(() => {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const PREVIEW_DELAY_MS = 300;
  const state = {
    programId: null,
    currency: "usd",
    exponent: 2,
    groups: [],
    partners: [],
    /** The reward being edited (null: the editor creates a new one). */
    editing: null,
    previewTimer: null,
    previewSeq: 0,
    checkTimer: null,
    checkSeq: 0,
  };

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

  /** The API's message (a 400 names the first invalid field in it). */
  const errorText = (r) => (r.json && r.json.error && r.json.error.message) || `Error ${r.status}`;

  // ---- money and numbers ----

  /** Minor units to an amount in the program's currency; the ISO 4217 exponent comes with the overview (Intl's CLDR digits differ for some codes). */
  function money(minor) {
    const digits = state.exponent;
    try {
      return new Intl.NumberFormat("en", { style: "currency", currency: state.currency.toUpperCase(), minimumFractionDigits: digits, maximumFractionDigits: digits }).format(
        minor / 10 ** digits,
      );
    } catch {
      return `${(minor / 10 ** digits).toFixed(digits)} ${state.currency.toUpperCase()}`;
    }
  }
  /** Basis points as a percentage: 2000 is "20%". */
  const percent = (bp) => new Intl.NumberFormat("en", { style: "percent", maximumFractionDigits: 2 }).format(bp / 10_000);
  const count = (n) => new Intl.NumberFormat("en").format(n);

  /** What the user typed in major units to integer minor units; NaN when it is not a number. */
  function toMinor(text) {
    const s = String(text).trim();
    if (s === "" || !Number.isFinite(Number(s))) return NaN;
    return Math.round(Number(s) * 10 ** state.exponent);
  }
  /** Minor units back to what an amount field shows. */
  const fromMinor = (minor) => String(minor / 10 ** state.exponent);
  /** Product or price ids typed with commas between them. */
  const idList = (text) =>
    String(text)
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);

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

  // ---- the program's groups, rewards and partners ----

  async function load() {
    const id = $("program").value;
    if (!id) return;
    state.programId = id;
    localStorage.setItem("programId", id);
    $("nav-overview").href = `/dashboard?program=${encodeURIComponent(id)}`;
    $("nav-rewards").href = `/dashboard/rewards?program=${encodeURIComponent(id)}`;
    // The overview of one day says the program's currency and its ISO 4217 decimals.
    const today = new Date().toISOString().slice(0, 10);
    const o = await api("GET", `/api/programs/${encodeURIComponent(id)}/overview?from=${today}&to=${today}`);
    if (o.status !== 200) {
      $("rewards").hidden = true;
      $("app-error").textContent = errorText(o);
      return;
    }
    state.currency = o.json.currency;
    state.exponent = o.json.currencyExponent;
    if (!(await refresh())) return;
    $("app-error").textContent = "";
    $("rewards").hidden = false;
    resetEditor(null);
    updateCurrencyLabels();
    scheduleCheck();
  }

  /** Reads the groups and partners again and redraws what shows them; false (and the error shown) when it failed. */
  async function refresh() {
    const [r, partners] = await Promise.all([api("GET", `/api/programs/${state.programId}/rewards`), loadPartners()]);
    if (r.status !== 200) {
      $("rewards").hidden = true;
      $("app-error").textContent = errorText(r);
      return false;
    }
    state.currency = r.json.currency;
    state.groups = r.json.groups;
    state.partners = partners;
    renderGroups();
    renderSelects();
    return true;
  }

  /** Every partner enrolled in the program (pages of 100, at most 1000). */
  async function loadPartners() {
    const all = [];
    let cursor = null;
    for (let page = 0; page < 10; page++) {
      const r = await api("GET", `/api/programs/${state.programId}/partners?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      if (r.status !== 200 || !r.json || !Array.isArray(r.json.data)) break;
      all.push(...r.json.data);
      cursor = r.json.nextCursor;
      if (!cursor) break;
    }
    return all.sort((a, b) => a.name.localeCompare(b.name));
  }

  const isNamedDefault = (g) => g.name.trim().toLowerCase() === "default";
  const defaultGroup = () => state.groups.find((g) => g.isDefault) || state.groups[0];
  const partnerName = (id) => {
    const p = state.partners.find((x) => x.partnerId === id);
    return p ? p.name : `Partner ${id}`;
  };
  /** The group a partner is in: the one that lists them, else the default group. */
  const groupOf = (partnerId) => state.groups.find((g) => !g.isDefault && g.memberIds.includes(partnerId)) || defaultGroup();

  function recurringWords(recurring) {
    if (!recurring || recurring.duration === "lifetime") return "every payment for the subscription's life";
    if (recurring.duration === "first") return "the first payment only";
    return `the first payment and renewals for ${count(recurring.months)} ${recurring.months === 1 ? "month" : "months"}`;
  }

  /** A reward's terms in words: "20% of each sale, every payment for the subscription's life". */
  function describeReward(r) {
    const amount = (value) => (r.kind === "percentage" ? percent(value) : money(value));
    if (r.event === "lead") return `${money(r.value)} per new customer (lead), once`;
    const parts = [`${amount(r.value)} ${r.kind === "percentage" ? "of each sale" : "per sale"}`, recurringWords(r.recurring)];
    if (r.productIds.length) parts.push(`only products ${r.productIds.join(", ")}`);
    if (r.priceIds.length) parts.push(`only prices ${r.priceIds.join(", ")}`);
    if (r.tiers) parts.push(tierWords(r.tiers, amount));
    return parts.join("; ");
  }

  function tierWords(tiers, amount) {
    const period = tiers.period === "month" ? "in the month" : "all time";
    const steps = tiers.steps.map((s) => `${amount(s.value)} from ${tiers.metric === "revenue" ? money(s.threshold) : `${count(s.threshold)} sales`}`);
    return `tiers on ${tiers.metric} ${period}: ${steps.join(", ")}`;
  }

  function renderGroups() {
    $("groups").replaceChildren(
      ...state.groups.map((g) => {
        const titleId = `group-${g.id}-title`;
        const title = el("h3", { id: titleId, tabindex: "-1" }, g.name);
        if (g.isDefault && !isNamedDefault(g)) title.append(" ", el("span", { class: "badge muted", text: "Default group" }));
        const rewards = el(
          "ul",
          { class: "rows", "aria-label": `Rewards of ${g.name}` },
          ...g.rewards.map((r) => {
            const edit = el("button", { type: "button", "aria-label": `Edit reward #${r.id} of ${g.name}` }, "Edit");
            const archive = el("button", { type: "button", class: "secondary", "aria-label": `Archive reward #${r.id} of ${g.name}` }, "Archive");
            edit.addEventListener("click", () => startEdit(r));
            archive.addEventListener("click", () => archiveReward(r, g));
            return el(
              "li",
              { "data-reward": String(r.id) },
              el("span", {}, el("span", { class: "terms", text: describeReward(r) }), " ", el("span", { class: "muted version", text: `#${r.id} · version ${r.version}` })),
              el("span", { class: "actions" }, edit, archive),
            );
          }),
        );
        const add = el("button", { type: "button", class: "secondary", "aria-label": `Add a reward to ${g.name}` }, "Add a reward");
        add.addEventListener("click", () => {
          resetEditor(g.id);
          $("r-value").focus();
          $("editor-title").scrollIntoView({ block: "start" });
        });
        return el(
          "article",
          { class: "group", "data-group": String(g.id), "aria-labelledby": titleId },
          title,
          el("p", { class: "muted", text: `Commissions held ${count(g.holdDays)} ${g.holdDays === 1 ? "day" : "days"} · minimum payout ${money(g.minPayoutCents)}` }),
          el("h4", { text: "Rewards" }),
          g.rewards.length ? rewards : el("p", { class: "muted", text: "No reward: this group's partners earn nothing." }),
          el("p", {}, add),
          el("h4", { text: "Partners" }),
          membersOf(g),
        );
      }),
    );
  }

  function membersOf(g) {
    if (g.isDefault) {
      const moved = new Set(state.groups.filter((x) => !x.isDefault).flatMap((x) => x.memberIds));
      const rest = state.partners.filter((p) => !moved.has(p.partnerId)).length;
      return el("p", { class: "members muted", text: `Every partner not moved to another group (${count(rest)} now).` });
    }
    if (!g.memberIds.length) return el("p", { class: "members muted", text: "No partner yet." });
    const names = g.memberIds.map(partnerName).sort((a, b) => a.localeCompare(b));
    const more = g.members > g.memberIds.length ? `, and ${count(g.members - g.memberIds.length)} more` : "";
    return el("p", { class: "members", text: `${names.join(", ")}${more}` });
  }

  /** The group and partner pickers of the forms, keeping what was chosen. */
  function renderSelects() {
    const fill = (select, options) => {
      const before = select.value;
      select.replaceChildren(...options.map(([value, text]) => el("option", { value, text })));
      if (options.some(([value]) => value === before)) select.value = before;
    };
    const groups = state.groups.map((g) => [String(g.id), g.isDefault && !isNamedDefault(g) ? `${g.name} (default group)` : g.name]);
    fill($("r-group"), groups);
    fill($("m-group"), groups);
    const partners = state.partners.map((p) => [String(p.partnerId), `${p.name}${p.status === "approved" ? "" : ` (${p.status})`}, in ${groupOf(p.partnerId).name}`]);
    fill($("m-partner"), partners);
    fill($("c-partner"), [["", "None: the default group's rewards"], ...state.partners.map((p) => [String(p.partnerId), p.name])]);
    const d = defaultGroup();
    $("g-hold-hint").textContent = d ? `Empty: ${count(d.holdDays)} days, as the default group.` : "";
  }

  function updateCurrencyLabels() {
    const code = state.currency.toUpperCase();
    $("g-min-label").textContent = `Minimum payout (${code})`;
    $("p-amount-label").textContent = `Example payment (${code})`;
    $("c-amount-label").textContent = `Payment (${code})`;
    updateKind();
  }

  // ---- the reward editor and its live preview ----

  /** Empties the editor for a new reward of `groupId` (or the group chosen), leaving edit mode. */
  function resetEditor(groupId) {
    state.editing = null;
    $("editor").reset();
    if (groupId != null) $("r-group").value = String(groupId);
    $("r-group").disabled = false;
    $("r-value").value = "";
    $("p-amount").value = "49";
    $("editor-title").textContent = "New reward";
    $("r-submit").textContent = "Create reward";
    $("r-cancel").hidden = true;
    $("r-tiers").hidden = true;
    $("editor-error").textContent = "";
    updateKind();
  }

  function startEdit(reward) {
    state.editing = reward;
    $("editor-error").textContent = "";
    $("r-group").value = String(reward.groupId);
    $("r-group").disabled = true;
    $("r-event").value = reward.event;
    $("r-kind").value = reward.kind;
    $("r-value").value = reward.kind === "percentage" ? String(reward.value / 100) : fromMinor(reward.value);
    const recurring = reward.recurring || { duration: "lifetime" };
    $(`r-rec-${recurring.duration}`).checked = true;
    $("r-months").value = recurring.duration === "months" ? String(recurring.months) : "12";
    $("r-products").value = reward.productIds.join(", ");
    $("r-prices").value = reward.priceIds.join(", ");
    $("editor-title").textContent = `Edit reward #${reward.id} (version ${reward.version})`;
    $("r-submit").textContent = `Save as version ${reward.version + 1}`;
    $("r-cancel").hidden = false;
    updateKind();
    $("editor-title").scrollIntoView({ block: "start" });
    $("r-event").focus();
  }

  /** Labels and fields that depend on the event and kind: a lead pays a flat amount once, with no recurring rule or product. */
  function updateKind() {
    const lead = $("r-event").value === "lead";
    if (lead) $("r-kind").value = "flat";
    $("r-kind").disabled = lead;
    const percentage = $("r-kind").value === "percentage";
    $("r-value-label").textContent = percentage ? "Percentage (%)" : `Amount (${state.currency.toUpperCase()})`;
    $("r-value-hint").textContent = percentage ? "Of each sale line, up to 100%." : lead ? "Paid once per new customer." : "Paid per sale line.";
    $("r-recurring").hidden = lead;
    $("r-recurring").disabled = lead;
    $("r-products-fields").hidden = lead;
    $("r-products-hint").hidden = lead;
    const tiers = state.editing && state.editing.tiers;
    $("r-tiers").hidden = !tiers;
    if (tiers) {
      $("r-tiers").textContent = keepsTiers()
        ? `Its tiers are kept: ${tierWords(tiers, (v) => (state.editing.kind === "percentage" ? percent(v) : money(v)))}.`
        : "Its tiers are dropped: they are in the reward's former kind.";
    }
    schedulePreview();
  }

  /** An edit keeps the reward's tiers (the form does not change them) unless its event or kind changes. */
  const keepsTiers = () => Boolean(state.editing && state.editing.tiers && state.editing.event === $("r-event").value && state.editing.kind === $("r-kind").value);

  /** The editor's terms as the API takes them, or the reason they are not complete. */
  function readTerms() {
    const event = $("r-event").value;
    const kind = event === "lead" ? "flat" : $("r-kind").value;
    const raw = $("r-value").value.trim();
    let value;
    if (kind === "percentage") {
      value = raw === "" ? NaN : Math.round(Number(raw) * 100);
      if (!Number.isFinite(value) || value < 1 || value > 10_000) return { error: "Enter a percentage from 0.01 to 100." };
    } else {
      value = toMinor(raw);
      if (!Number.isFinite(value) || value < 1) return { error: `Enter an amount above zero in ${state.currency.toUpperCase()}.` };
    }
    const terms = { event, kind, value, productIds: [], priceIds: [], tiers: null };
    if (event === "sale") {
      const duration = document.querySelector('input[name="recurring"]:checked').value;
      if (duration === "months") {
        const months = Number($("r-months").value);
        if (!Number.isInteger(months) || months < 1 || months > 120) return { error: "Enter a number of months from 1 to 120." };
        terms.recurring = { duration, months };
      } else terms.recurring = { duration };
      terms.productIds = idList($("r-products").value);
      terms.priceIds = idList($("r-prices").value);
      if (keepsTiers()) terms.tiers = state.editing.tiers;
    }
    return { terms };
  }

  /**
   * A preview in words: the amount per payment and for how long, by the recurring rule:
   * "A $49.00 monthly plan pays $9.80 for 12 months (...)".
   */
  function previewWords(preview, amountCents, product) {
    const what = (plan) => `A ${money(amountCents)} ${plan}${product ? ` of ${product}` : ""}`;
    if (!preview.reward || preview.commissionCents === 0) return `${what("sale")} earns nothing by these rewards: none covers it.`;
    const pays = money(preview.commissionCents);
    const tier = preview.reward.tier ? ` (a tier is reached: ${preview.reward.kind === "percentage" ? percent(preview.reward.value) : money(preview.reward.value)})` : "";
    const r = preview.recurring || { duration: "lifetime" };
    if (preview.reward.event === "lead") return `Each new customer pays ${pays}, once${tier}.`;
    if (r.duration === "first") return `${what("sale")} pays ${pays} on the first payment only; renewals earn nothing${tier}.`;
    if (r.duration === "months") {
      const months = `${count(r.months)} ${r.months === 1 ? "month" : "months"}`;
      return `${what("monthly plan")} pays ${pays} for ${months} (each payment in the subscription's first ${months} earns it)${tier}.`;
    }
    return `${what("monthly plan")} pays ${pays} on every payment for the subscription's life${tier}.`;
  }

  function schedulePreview() {
    clearTimeout(state.previewTimer);
    state.previewTimer = setTimeout(runPreview, PREVIEW_DELAY_MS);
  }

  function setPreview(text) {
    if ($("preview").textContent !== text) $("preview").textContent = text;
  }

  async function runPreview() {
    if (!state.programId) return;
    const seq = ++state.previewSeq;
    const { terms, error } = readTerms();
    if (error) return setPreview(error);
    if (terms.event === "lead") return setPreview(`Each new customer a partner of this group refers pays ${money(terms.value)}, once (leads your server reports with the API key).`);
    const amountCents = toMinor($("p-amount").value);
    if (!Number.isFinite(amountCents) || amountCents < 1) return setPreview(`Enter an example payment above zero in ${state.currency.toUpperCase()}.`);
    const product = $("p-product").value.trim();
    const body = { amountCents, draft: terms };
    if (product) body.productId = product;
    const r = await api("POST", `/api/programs/${state.programId}/rewards/preview`, body);
    if (seq !== state.previewSeq) return; // a later change is on its way
    setPreview(r.status === 200 ? previewWords(r.json, amountCents, product) : `No preview: ${errorText(r)}`);
  }

  async function saveReward(e) {
    e.preventDefault();
    const { terms, error } = readTerms();
    if (error) {
      $("editor-error").textContent = error;
      $("r-value").focus();
      return;
    }
    const editing = state.editing;
    const button = $("r-submit");
    button.disabled = true;
    const r = editing
      ? await api("PUT", `/api/programs/${state.programId}/rewards/${editing.id}`, terms)
      : await api("POST", `/api/programs/${state.programId}/rewards`, { groupId: Number($("r-group").value), ...terms });
    button.disabled = false;
    if (r.status !== 200) {
      $("editor-error").textContent = errorText(r);
      return;
    }
    const group = state.groups.find((g) => g.id === r.json.groupId);
    announce(editing ? `Reward #${r.json.id} saved as version ${r.json.version}.` : `Reward #${r.json.id} created in ${group ? group.name : "the group"}.`);
    await refresh();
    resetEditor(r.json.groupId);
    // The keyboard goes to the reward just saved.
    const saved = document.querySelector(`li[data-reward="${r.json.id}"] button`);
    if (saved) saved.focus();
  }

  async function archiveReward(reward, group) {
    if (!window.confirm(`Archive reward #${reward.id} of ${group.name}? It pays nothing from now on; commissions it made are unchanged.`)) return;
    const r = await api("POST", `/api/programs/${state.programId}/rewards/${reward.id}/archive`);
    if (r.status !== 200) {
      $("app-error").textContent = errorText(r);
      return;
    }
    announce(`Reward #${reward.id} of ${group.name} archived.`);
    if (state.editing && state.editing.id === reward.id) resetEditor(group.id);
    await refresh();
    const title = $(`group-${group.id}-title`);
    if (title) title.focus();
  }

  // ---- groups and partners ----

  async function createGroup(e) {
    e.preventDefault();
    const name = $("g-name").value.trim();
    const holdText = $("g-hold").value.trim();
    const holdDays = Number(holdText);
    const minPayoutCents = toMinor($("g-min").value || "0");
    let error = "";
    if (!name) error = "Enter the group's name.";
    else if (holdText !== "" && (!Number.isInteger(holdDays) || holdDays < 0 || holdDays > 365)) error = "Hold days are a whole number from 0 to 365.";
    else if (!Number.isFinite(minPayoutCents) || minPayoutCents < 0) error = "The minimum payout is an amount of zero or more.";
    if (error) {
      $("group-error").textContent = error;
      return;
    }
    const body = { name, minPayoutCents };
    if (holdText !== "") body.holdDays = holdDays;
    const r = await api("POST", `/api/programs/${state.programId}/groups`, body);
    if (r.status !== 200) {
      $("group-error").textContent = errorText(r);
      return;
    }
    $("group-error").textContent = "";
    $("new-group").reset();
    announce(`Group ${r.json.name} created.`);
    await refresh();
    if (!state.editing) $("r-group").value = String(r.json.id);
    $(`group-${r.json.id}-title`).focus();
  }

  async function movePartner(e) {
    e.preventDefault();
    const partnerId = Number($("m-partner").value);
    const groupId = Number($("m-group").value);
    if (!partnerId || !groupId) {
      $("move-error").textContent = "Choose a partner and a group.";
      return;
    }
    const r = await api("PUT", `/api/programs/${state.programId}/group-members`, { assignments: [{ partnerId, groupId }] });
    if (r.status !== 200) {
      $("move-error").textContent = errorText(r);
      return;
    }
    $("move-error").textContent = "";
    await refresh();
    announce(`${partnerName(partnerId)} moved to ${groupOf(partnerId).name}.`);
    scheduleCheck();
  }

  // ---- what a partner would earn (the preview by a partner's group and tier) ----

  function scheduleCheck() {
    clearTimeout(state.checkTimer);
    state.checkTimer = setTimeout(runCheck, PREVIEW_DELAY_MS);
  }

  async function runCheck() {
    if (!state.programId) return;
    const seq = ++state.checkSeq;
    const amountCents = toMinor($("c-amount").value);
    const out = $("check-result");
    if (!Number.isFinite(amountCents) || amountCents < 1) {
      out.textContent = `Enter a payment above zero in ${state.currency.toUpperCase()}.`;
      return;
    }
    const partnerId = Number($("c-partner").value);
    const product = $("c-product").value.trim();
    const body = { amountCents };
    if (partnerId) body.partnerId = partnerId;
    if (product) body.productId = product;
    const r = await api("POST", `/api/programs/${state.programId}/rewards/preview`, body);
    if (seq !== state.checkSeq) return;
    if (r.status !== 200) {
      out.textContent = `No preview: ${errorText(r)}`;
      return;
    }
    const group = state.groups.find((g) => g.id === r.json.groupId);
    const groupName = group ? group.name : "their group";
    const who = partnerId ? `${partnerName(partnerId)} (${groupName})` : `No partner, by the rewards of ${groupName}`;
    const text = `${who}: ${previewWords(r.json, amountCents, product)}`;
    if (out.textContent !== text) out.textContent = text;
  }

  // ---- wiring ----

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

  $("editor").addEventListener("submit", saveReward);
  $("editor").addEventListener("input", schedulePreview);
  $("editor").addEventListener("change", (e) => (["r-event", "r-kind"].includes(e.target.id) || e.target.name === "recurring" ? updateKind() : schedulePreview()));
  $("editor").addEventListener("keydown", (e) => {
    if (e.key === "Escape" && state.editing) {
      const id = state.editing.id;
      resetEditor(state.editing.groupId);
      const edit = document.querySelector(`li[data-reward="${id}"] button`);
      if (edit) edit.focus();
    }
  });
  // Typing a number of months chooses the rule it belongs to.
  $("r-months").addEventListener("input", () => {
    if (!$("r-rec-months").checked) {
      $("r-rec-months").checked = true;
      updateKind();
    }
  });
  $("r-cancel").addEventListener("click", () => {
    const id = state.editing && state.editing.id;
    resetEditor(state.editing ? state.editing.groupId : null);
    const edit = id && document.querySelector(`li[data-reward="${id}"] button`);
    if (edit) edit.focus();
  });
  $("new-group").addEventListener("submit", createGroup);
  $("move").addEventListener("submit", movePartner);
  $("check").addEventListener("submit", (e) => {
    e.preventDefault();
    scheduleCheck();
  });
  $("check").addEventListener("input", scheduleCheck);
  $("check").addEventListener("change", scheduleCheck);

  api("GET", "/api/auth/me").then((r) => (r.status === 200 ? showApp(r.json) : showLogin()));
})();
