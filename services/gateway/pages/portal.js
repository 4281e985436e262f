/*
 * The partner portal page (/portal and /portal/sign-in): sign-in by emailed link, then per program the referral link,
 * clicks, balance, notices, commissions with their refunds, referred customers (masked) and withdrawals. It talks only
 * to /api/partner (same origin; the session is the HttpOnly svc_partner_session cookie) and writes data into the page
 * with textContent only, never as HTML. Docs: docs/partners.md.
 */
(function () {
  "use strict";

  var $ = function (id) {
    return document.getElementById(id);
  };
  var state = { me: null, programId: null, timer: null };

  function api(method, path, body) {
    var init = { method: method, headers: {}, credentials: "same-origin" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch("/api/partner" + path, init).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try {
          data = text ? JSON.parse(text) : null;
        } catch (e) {
          data = null;
        }
        if (!res.ok) {
          var err = new Error((data && data.error && data.error.message) || "Request failed (" + res.status + ")");
          err.status = res.status;
          throw err;
        }
        return data;
      });
    });
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "className") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) {
      if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function show(id, visible) {
    $(id).hidden = !visible;
  }

  function setError(message) {
    $("error").textContent = message || "";
    show("error", Boolean(message));
  }

  function setStatus(message) {
    $("status").textContent = message || "";
  }

  /** Minor units to a localised amount: the currency's own number of decimals (JPY has none). */
  function money(cents, currency) {
    var code = String(currency || "usd").toUpperCase();
    var format;
    try {
      format = new Intl.NumberFormat("en", { style: "currency", currency: code });
    } catch (e) {
      return cents + " " + code;
    }
    var digits = format.resolvedOptions().maximumFractionDigits;
    return format.format(cents / Math.pow(10, digits));
  }

  function day(iso) {
    return iso ? new Date(iso).toLocaleDateString("en", { year: "numeric", month: "short", day: "numeric" }) : "";
  }

  // ---------------------------------------------------------------------------------------------
  // Sign-in

  function showSignIn() {
    stopRefresh();
    show("portal", false);
    show("account", false);
    show("check-email", false);
    show("sign-in", true);
  }

  $("sign-in").addEventListener("submit", function (event) {
    event.preventDefault();
    var email = $("email").value.trim();
    if (!email) {
      setError("Enter your email.");
      $("email").focus();
      return;
    }
    setError("");
    var button = $("sign-in").querySelector("button");
    button.disabled = true;
    api("POST", "/auth/link", { email: email })
      .then(function () {
        $("sent-to").textContent = email;
        show("sign-in", false);
        show("check-email", true);
        $("check-email").querySelector("h2").focus();
      })
      .catch(function (err) {
        setError(err.message);
      })
      .then(function () {
        button.disabled = false;
      });
  });

  $("another-email").addEventListener("click", function () {
    show("check-email", false);
    show("sign-in", true);
    $("email").focus();
  });

  $("sign-out").addEventListener("click", function () {
    api("POST", "/auth/sign-out").then(function () {
      state.me = null;
      setStatus("Signed out.");
      showSignIn();
    });
  });

  /** /portal/sign-in#token=...: the token stays in the fragment (never sent to a server) until posted once. */
  function signInFromLink() {
    var match = /[#&]token=([A-Za-z0-9_-]+)/.exec(location.hash);
    history.replaceState(null, "", "/portal");
    if (!match) return Promise.resolve(false);
    setStatus("Signing you in…");
    return api("POST", "/auth/sign-in", { token: match[1] })
      .then(function () {
        setStatus("");
        return true;
      })
      .catch(function (err) {
        setStatus("");
        setError(err.message);
        return false;
      });
  }

  // ---------------------------------------------------------------------------------------------
  // The portal

  function stopRefresh() {
    if (state.timer) clearInterval(state.timer);
    state.timer = null;
  }

  function loadMe() {
    return api("GET", "/me").then(function (me) {
      state.me = me;
      $("who").textContent = me.partner.name + (me.partner.email ? " (" + me.partner.email + ")" : "");
      show("account", true);
      show("sign-in", false);
      show("check-email", false);
      show("portal", true);
      var approved = me.programs.filter(function (p) {
        return p.status === "approved";
      });
      var select = $("program");
      select.textContent = "";
      me.programs.forEach(function (p) {
        var option = el("option", { value: String(p.programId), text: p.name + (p.status === "approved" ? "" : " (" + p.status + ")") });
        select.appendChild(option);
      });
      if (!state.programId || !me.programs.some((p) => p.programId === state.programId))
        state.programId = approved.length ? approved[0].programId : me.programs.length ? me.programs[0].programId : null;
      if (state.programId) select.value = String(state.programId);
      show("program-picker", me.programs.length > 1);
      return renderProgram();
    });
  }

  $("program").addEventListener("change", function () {
    state.programId = Number($("program").value);
    renderProgram();
  });

  $("refresh").addEventListener("click", function () {
    refresh();
  });

  function refresh() {
    return loadMe().catch(handleFailure);
  }

  function handleFailure(err) {
    if (err && err.status === 401) {
      setError("");
      showSignIn();
      return;
    }
    setError(err ? err.message : "Something went wrong.");
  }

  function section(title, id, children) {
    return el("section", { "aria-labelledby": id + "-title", id: id }, [el("h2", { id: id + "-title", text: title })].concat(children));
  }

  function figure(label, value, name) {
    return el("div", { className: "figure", "data-figure": name }, [el("span", { className: "value", text: value }), el("span", { className: "label", text: label })]);
  }

  function referralSection(p) {
    if (!p.referralLink) {
      return section("Your referral code", "referral", [
        el("p", {}, ["Your code is ", el("strong", { text: p.referralCode }), ". Add ", el("code", { text: "?ref=" + p.referralCode }), " to any link to the merchant's site."]),
      ]);
    }
    var input = el("input", { id: "referral-link", type: "text", readonly: "readonly", value: p.referralLink });
    var copied = el("span", { className: "muted", role: "status", "aria-live": "polite" });
    var button = el("button", { type: "button", id: "copy-link", text: "Copy link" });
    button.addEventListener("click", function () {
      var done = function () {
        copied.textContent = "Copied.";
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(p.referralLink).then(done, function () {
          input.select();
          copied.textContent = "Press Ctrl+C (or Cmd+C) to copy.";
        });
      } else {
        input.select();
        copied.textContent = "Press Ctrl+C (or Cmd+C) to copy.";
      }
    });
    return section("Your referral link", "referral", [
      el("label", { for: "referral-link", text: "Share this link; visitors who buy are credited to you." }),
      el("div", { className: "copy-row" }, [input, button, copied]),
    ]);
  }

  /** A paginated list: the first page, then "Show more" while there is a next cursor. */
  function pagedList(path, renderRows, empty) {
    var holder = el("div", {});
    var more = el("button", { type: "button", className: "secondary", text: "Show more" });
    more.hidden = true;
    var cursor = null;
    var first = true;
    function load() {
      return api("GET", path + (path.indexOf("?") >= 0 ? "&" : "?") + "limit=25" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : "")).then(function (page) {
        if (first && page.data.length === 0) holder.appendChild(el("p", { className: "muted", text: empty }));
        if (page.data.length) renderRows(holder, page.data, first);
        first = false;
        cursor = page.nextCursor;
        more.hidden = !cursor;
      });
    }
    more.addEventListener("click", function () {
      load().catch(handleFailure);
    });
    return { node: el("div", {}, [holder, more]), load: load };
  }

  function table(caption, headers) {
    var head = el(
      "tr",
      {},
      headers.map(function (h) {
        return el("th", { scope: "col", className: h.num ? "num" : "", text: h.label });
      }),
    );
    var body = el("tbody", {});
    var t = el("table", {}, [el("caption", { className: "visually-hidden", text: caption }), el("thead", {}, [head]), body]);
    return { wrap: el("div", { className: "table-wrap" }, [t]), body: body };
  }

  function commissionsList(p) {
    var t = null;
    return pagedList(
      "/programs/" + p.programId + "/commissions",
      function (holder, rows) {
        if (!t) {
          t = table("Your commissions", [
            { label: "Date" },
            { label: "Order" },
            { label: "Sale", num: true },
            { label: "Commission", num: true },
            { label: "Refunds took", num: true },
            { label: "Now worth", num: true },
            { label: "Status" },
          ]);
          holder.appendChild(t.wrap);
        }
        rows.forEach(function (c) {
          var refunds = c.refunds.length
            ? el(
                "ul",
                { className: "refunds" },
                c.refunds.map(function (r) {
                  return el("li", {
                    text:
                      (r.reasonCode === "chargeback" ? "Chargeback" : "Refund") +
                      " of " +
                      money(r.amountCents, c.currency) +
                      " on " +
                      day(r.createdAt) +
                      ": −" +
                      money(r.deductionCents, c.currency) +
                      (r.reason ? " (" + r.reason + ")" : ""),
                  });
                }),
              )
            : null;
          t.body.appendChild(
            el("tr", { "data-commission": String(c.id) }, [
              el("td", { text: day(c.createdAt) }),
              el("td", {}, [c.transactionId, refunds]),
              el("td", { className: "num", text: money(c.saleAmountCents, c.currency) }),
              el("td", { className: "num", text: money(c.amountCents, c.currency) }),
              el("td", { className: "num", text: c.deductedCents ? "−" + money(c.deductedCents, c.currency) : "" }),
              el("td", { className: "num net", text: money(c.netCents, c.currency) }),
              el("td", {}, [el("span", { className: "badge", text: c.status })]),
            ]),
          );
        });
      },
      "No commissions yet: they appear here when a customer you referred buys.",
    );
  }

  function withdrawalsList(p) {
    var t = null;
    return pagedList(
      "/programs/" + p.programId + "/withdrawals",
      function (holder, rows) {
        if (!t) {
          t = table("Your withdrawals", [{ label: "Requested" }, { label: "Amount", num: true }, { label: "Status" }, { label: "Paid" }]);
          holder.appendChild(t.wrap);
        }
        rows.forEach(function (w) {
          t.body.appendChild(
            el("tr", {}, [
              el("td", { text: day(w.createdAt) }),
              el("td", { className: "num", text: money(w.amountCents, w.currency) }),
              el("td", {}, [el("span", { className: "badge", text: w.status })]),
              el("td", { text: day(w.paidAt) }),
            ]),
          );
        });
      },
      "No withdrawals yet.",
    );
  }

  function customersList(p) {
    var t = null;
    return pagedList(
      "/programs/" + p.programId + "/customers",
      function (holder, rows) {
        if (!t) {
          t = table("Customers you referred", [{ label: "Signed up" }, { label: "Customer" }, { label: "Email" }]);
          holder.appendChild(t.wrap);
        }
        rows.forEach(function (c) {
          t.body.appendChild(el("tr", {}, [el("td", { text: day(c.createdAt) }), el("td", { text: c.customer }), el("td", { text: c.email || "" })]));
        });
      },
      "No referred customers yet.",
    );
  }

  function noticesList(p) {
    var list = el("ul", { className: "notices" });
    return pagedList(
      "/programs/" + p.programId + "/notices",
      function (holder, rows) {
        if (!list.parentNode) holder.appendChild(list);
        rows.forEach(function (n) {
          var text =
            (n.status === "reversed" ? "Commission reversed" : "Commission reduced") +
            " for order " +
            n.transactionId +
            ": −" +
            money(n.deductionCents, n.currency) +
            (n.reason ? " (" + n.reason + ")" : "") +
            ", " +
            day(n.createdAt);
          var item = el("li", { "data-notice": String(n.id), className: n.partnerReadAt ? "" : "unread" }, [el("span", { text: (n.partnerReadAt ? "" : "New: ") + text })]);
          if (!n.partnerReadAt) {
            var button = el("button", { type: "button", className: "secondary", text: "Mark read" });
            button.setAttribute("aria-label", "Mark read: order " + n.transactionId);
            button.addEventListener("click", function () {
              button.disabled = true;
              api("POST", "/programs/" + p.programId + "/notices/" + n.id + "/read")
                .then(function () {
                  item.className = "";
                  item.firstChild.textContent = text;
                  item.removeChild(button);
                  setStatus("Notice marked read.");
                })
                .catch(function (err) {
                  button.disabled = false;
                  handleFailure(err);
                });
            });
            item.appendChild(button);
          }
          list.appendChild(item);
        });
      },
      "No notices.",
    );
  }

  function renderProgram() {
    var view = $("program-view");
    var p = (state.me.programs || []).filter(function (x) {
      return x.programId === state.programId;
    })[0];
    if (!p) {
      view.textContent = "";
      view.appendChild(el("section", {}, [el("h2", { text: "No programs yet" }), el("p", { text: "You are not enrolled in any program yet." })]));
      return Promise.resolve();
    }
    if (p.status !== "approved") {
      view.textContent = "";
      view.appendChild(
        el("section", {}, [el("h2", { text: p.name }), el("p", { text: "Your enrollment is " + p.status + ". The merchant has to approve it before you can refer customers." })]),
      );
      return Promise.resolve();
    }
    var b = p.balance;
    var figures = el("div", { className: "grid" }, [
      figure("Clicks", String(p.clicks), "clicks"),
      figure("Pending", money(b.pendingCents, p.currency), "pending"),
      figure("Balance", money(b.balanceCents, p.currency), "balance"),
      figure("Credited", money(b.creditedCents, p.currency), "credited"),
      figure("Paid out", money(b.paidCents, p.currency), "paid"),
    ]);
    var notices = noticesList(p);
    var commissions = commissionsList(p);
    var customers = customersList(p);
    var withdrawals = withdrawalsList(p);
    var fresh = el("div", {}, [
      referralSection(p),
      section(p.name + " at a glance", "figures", [
        figures,
        el("p", { className: "muted", text: "Commissions count towards your balance once the merchant's hold period ends; refunds during it reduce them." }),
      ]),
      section("Notices", "notices", [notices.node]),
      section("Commissions", "commissions", [commissions.node]),
      section("Referred customers", "customers", [el("p", { className: "muted", text: "Shown masked: the customers are the merchant's." }), customers.node]),
      section("Withdrawals", "withdrawals", [withdrawals.node]),
    ]);
    return Promise.all([notices.load(), commissions.load(), customers.load(), withdrawals.load()]).then(function () {
      // Swapped in whole, so a refresh never shows half-loaded lists (or moves the keyboard focus out of the page).
      var focusedId = document.activeElement && document.activeElement.id;
      view.textContent = "";
      view.appendChild(fresh);
      if (focusedId && $(focusedId)) $(focusedId).focus();
      $("updated").textContent = "Updated " + new Date().toLocaleTimeString("en");
    });
  }

  function start() {
    signInFromLink()
      .then(function () {
        return loadMe();
      })
      .then(function () {
        stopRefresh();
        // New sales and refunds show up without reloading; paused while the tab is hidden.
        state.timer = setInterval(function () {
          if (document.visibilityState === "visible") refresh();
        }, 30000);
      })
      .catch(function (err) {
        if (err && err.status === 401) showSignIn();
        else handleFailure(err);
      });
  }

  start();
})();
