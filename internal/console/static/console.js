// muster console: live updates over server-sent events and the operator actions (dry run,
// confirmation, execution). Plain browser JavaScript, no framework, no build step.
(function () {
  "use strict";

  var live = document.getElementById("live");
  var status = document.getElementById("live-status");

  // refresh re-renders the live part of the page from the server (same URL, fragment only).
  var refreshing = false, again = false;
  function refresh() {
    if (!live) return;
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(window.location.href, { headers: { "X-Console-Fragment": "1" }, cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html !== null) {
          live.innerHTML = html;
          live.dataset.refreshed = String(Number(live.dataset.refreshed || "0") + 1);
        }
      })
      .catch(function () { /* the next event retries */ })
      .then(function () {
        refreshing = false;
        if (again) { again = false; refresh(); }
      });
  }

  if (live && live.dataset.events && window.EventSource) {
    var es = new EventSource(live.dataset.events);
    es.addEventListener("hello", function () {
      if (status) status.classList.add("on");
      refresh(); // anything that changed between the page load and the subscription
    });
    es.addEventListener("change", refresh);
    es.onerror = function () { if (status) status.classList.remove("on"); };
    window.addEventListener("pagehide", function () { es.close(); });
  }

  // Operator actions.
  var actions = document.getElementById("actions");
  if (!actions) return;
  var group = actions.dataset.group;
  var result = document.getElementById("action-result");
  var msg = result.querySelector(".message");
  var cmd = result.querySelector(".command");
  var plan = result.querySelector("table.plan");
  var confirmForm = result.querySelector("form.confirm");
  var confirmInput = confirmForm.querySelector("input[name=confirm]");
  var execButton = confirmForm.querySelector("button[type=submit]");
  var pending = null; // {url, body} of the previewed action

  function topicsOf(s) {
    return s.split(/[\s]+/).filter(function (t) { return t.length > 0; });
  }

  function bodyOf(form) {
    var kind = form.dataset.kind, b = {};
    function field(name) { return form.elements.namedItem(name).value; }
    if (kind === "reset") {
      b.scenario = field("scenario");
      if (field("value").trim() !== "") b.value = field("value").trim();
      var ts = topicsOf(field("topics"));
      if (ts.length > 0) b.topics = ts; else b.all_topics = true;
    } else if (kind === "delete-offsets") {
      b.topics = topicsOf(field("topics"));
    } else if (kind === "remove-member") {
      if (field("reason").trim() !== "") b.reason = field("reason").trim();
    }
    return b;
  }

  function show(text, cls) {
    result.hidden = false;
    msg.textContent = text;
    msg.className = "message " + (cls || "");
  }

  function showPlan(res) {
    var body = plan.querySelector("tbody");
    while (body.firstChild) body.removeChild(body.firstChild);
    var offs = res.offsets || [];
    offs.forEach(function (o) {
      var tr = document.createElement("tr");
      [o.topic, o.partition, o.current_offset < 0 ? "–" : o.current_offset, o.new_offset < 0 ? "deleted" : o.new_offset]
        .forEach(function (v, i) {
          var td = document.createElement("td");
          if (i > 0) td.className = "num";
          td.textContent = String(v);
          tr.appendChild(td);
        });
      body.appendChild(tr);
    });
    plan.hidden = offs.length === 0;
  }

  function post(url, body) {
    return fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (r) {
        return r.json().then(function (j) { return { ok: r.ok, status: r.status, body: j }; });
      });
  }

  actions.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.classList.contains("action")) return;
    ev.preventDefault();
    var url = form.dataset.url;
    if (!url) { show("Choose a member with “remove…” in the members table first.", "error"); return; }
    var body = bodyOf(form);
    body.execute = false;
    show("Planning…");
    cmd.textContent = "";
    plan.hidden = true;
    confirmForm.hidden = true;
    post(url, body).then(function (r) {
      if (!r.ok) { pending = null; show(r.body.error || ("HTTP " + r.status), "error"); return; }
      pending = { url: url, body: body };
      show(r.body.message);
      cmd.textContent = r.body.command || "";
      showPlan(r.body);
      confirmInput.value = "";
      execButton.disabled = true;
      confirmForm.hidden = false;
      confirmInput.focus();
    }).catch(function (e) { show("Request failed: " + e, "error"); });
  });

  confirmInput.addEventListener("input", function () {
    execButton.disabled = confirmInput.value !== group;
  });

  confirmForm.addEventListener("submit", function (ev) {
    ev.preventDefault();
    if (!pending || confirmInput.value !== group) return;
    var body = Object.assign({}, pending.body, { execute: true });
    execButton.disabled = true;
    show("Executing…");
    post(pending.url, body).then(function (r) {
      confirmForm.hidden = true;
      pending = null;
      if (!r.ok) { show(r.body.error || ("HTTP " + r.status), "error"); return; }
      show(r.body.message, "done");
      cmd.textContent = r.body.command || "";
      showPlan(r.body);
      refresh();
    }).catch(function (e) { show("Request failed: " + e, "error"); });
  });

  confirmForm.querySelector("button.cancel").addEventListener("click", function () {
    pending = null;
    confirmForm.hidden = true;
    show("Cancelled; nothing was changed.");
  });

  // "remove…" on a member row fills the remove-member form.
  document.addEventListener("click", function (ev) {
    var b = ev.target.closest ? ev.target.closest("button.remove-member") : null;
    if (!b) return;
    var det = document.getElementById("act-remove-member");
    var form = det.querySelector("form");
    form.elements.namedItem("member").value = b.dataset.member;
    form.dataset.url = form.dataset.base + encodeURIComponent(b.dataset.member) + "/remove";
    det.open = true;
    det.scrollIntoView({ block: "center" });
  });
})();
