(function () {
  'use strict';
  var tip = document.getElementById('tip');
  var NAMES = {accept: 'accepted push', landed: 'landed on the ref',
    unlanded: 'admitted, did not land on the ref', bump: 'bumped push (tokenless)',
    allow: 'allowed push (tokenless)', fenced: 'FENCED push', rejected: 'REJECTED push'};

  function utc(iso) { return iso ? iso.replace('T', ' ').replace('Z', ' UTC') : '?'; }
  function local(iso) { return new Date(iso).toLocaleString() + ' local'; }
  function short(sha) { return sha ? sha.substring(0, 12) : '?'; }
  function when(iso) { return utc(iso) + ' (' + local(iso) + ')'; }

  function lines(d) {
    var out = [];
    if (d.kind === 'tick') {
      return [utc(d.t), local(d.t)];
    }
    if (d.kind === 'lease') {
      out.push('lease of ' + d.holder + ', token ' + d.token);
      out.push('granted ' + when(d.t));
      var renewed = d.end === 'renewed';
      out.push((renewed ? 'expired' : d.end) + ' ' + when(d.heldUntil));
      if (d.tEnd !== d.heldUntil) {
        out.push('lapsed until ' + (renewed ? 'renewed' : 'superseded') + ' ' + when(d.tEnd));
      }
      return out;
    }
    if (d.kind === 'cluster') {
      out.push(d.count + ' marks on ' + d.lane + ':');
      d.kinds.split(',').forEach(function (kv) {
        var p = kv.split(':');
        out.push('  ' + p[1] + ' ' + (NAMES[p[0]] || p[0]));
      });
      out.push('from ' + when(d.t));
      out.push('to   ' + when(d.tEnd));
      return out;
    }
    out.push(NAMES[d.kind] || d.kind);
    out.push('time   ' + when(d.t));
    if (d.ref) { out.push('ref    ' + d.ref); }
    out.push('token  ' + (d.token === '0' ? 'none' : d.token));
    out.push('holder ' + (d.holder || '-'));
    out.push('pusher ' + (d.pusher || '-'));
    if (d.old || d['new']) { out.push('sha    ' + short(d.old) + ' \u2192 ' + short(d['new'])); }
    if (d.reason) { out.push('reason ' + d.reason); }
    if (d.detail) { out.push('detail ' + d.detail); }
    return out;
  }

  function show(el, x, y) {
    tip.textContent = lines(el.dataset).join('\n');
    tip.dataset.for = el.dataset.kind;
    tip.hidden = false;
    // Measured at the left edge, where nothing squeezes it; then put beside the pointer, inside the window.
    tip.style.left = '0px';
    tip.style.top = '0px';
    var w = tip.offsetWidth, h = tip.offsetHeight;
    var vw = document.documentElement.clientWidth, vh = document.documentElement.clientHeight;
    var left = x + 14 + w > vw ? x - w - 14 : x + 14;
    var top = y + 16 + h > vh ? y - h - 10 : y + 16;
    tip.style.left = Math.max(4, left) + 'px';
    tip.style.top = Math.max(4, top) + 'px';
  }

  document.addEventListener('mouseover', function (ev) {
    var el = ev.target.closest ? ev.target.closest('[data-tip]') : null;
    if (!el) { tip.hidden = true; return; }
    show(el, ev.clientX, ev.clientY);
  });

  var kind = document.getElementById('f-kind');
  var lane = document.getElementById('f-lane');
  var shown = document.getElementById('shown');
  var rows = document.querySelectorAll('#events tbody tr');
  function filter() {
    var k = kind.value, l = lane.value, n = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var ok = (!k || r.dataset.kind === k) && (!l || r.dataset.lane === l);
      r.hidden = !ok;
      if (ok) { n++; }
    }
    shown.textContent = n + ' of ' + rows.length + ' events';
  }
  if (kind && lane) {
    kind.addEventListener('change', filter);
    lane.addEventListener('change', filter);
  }
})();
