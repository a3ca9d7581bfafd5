extension Timeline {
    /// The script: zoom, pan, highlight a lineage; marks the page ready (a browser test reads the marker).
    static let script = """
        <script>
        (function () {
          var svg = document.getElementById('timeline');
          if (!svg) { document.body.setAttribute('data-timeline-ready', '1'); return; }
          var L = +svg.dataset.left, P = +svg.dataset.plot, T0 = +svg.dataset.t0, T1 = +svg.dataset.t1;
          var v0 = T0, v1 = T1;
          var steps = [1,2,5,10,15,30,60,120,300,600,900,1800,3600,7200,10800,21600,43200,86400,172800,604800];
          function X(t) { return L + (t - v0) / Math.max(v1 - v0, 1e-9) * P; }
          function fmt(s) {
            s = Math.round(s); var p = function (n) { return (n < 10 ? '0' : '') + n; };
            if (s >= 86400) return Math.floor(s / 86400) + 'd' + p(Math.floor(s % 86400 / 3600)) + 'h';
            if (s >= 3600) return Math.floor(s / 3600) + 'h' + p(Math.floor(s % 3600 / 60)) + 'm';
            if (s >= 60) return Math.floor(s / 60) + 'm' + p(s % 60) + 's';
            return s + 's';
          }
          var timed = Array.prototype.slice.call(svg.querySelectorAll('[data-t]:not(#tl-axis *)'));
          var lines = Array.prototype.slice.call(svg.querySelectorAll('polyline[data-pts]'));
          var axis = svg.querySelector("#tl-axis");
          var axisLineEnd = svg.getAttribute('height') - 8;
          function draw() {
            timed.forEach(function (el) {
              var t = +el.dataset.t, tag = el.tagName;
              if (tag === 'rect') {
                var t2 = +el.dataset.t2, min = +(el.dataset.min || 1);
                el.setAttribute('x', X(t)); el.setAttribute('width', Math.max(min, X(t2) - X(t)));
              } else if (tag === 'line') {
                el.setAttribute('x1', X(t)); el.setAttribute('x2', X(+el.dataset.t2));
              } else if (tag === 'text') {
                el.setAttribute('x', X(t) + (+(el.dataset.dx || 0)));
              } else {
                el.setAttribute('transform', 'translate(' + X(t) + ',' + el.dataset.y + ')');
              }
            });
            lines.forEach(function (el) {
              el.setAttribute('points', el.dataset.pts.split(' ').map(function (p) {
                var a = p.split(','); return X(+a[0]) + ',' + a[1];
              }).join(' '));
            });
            if (axis) {
              var want = (v1 - v0) / Math.max(P / 90, 1), step = steps[steps.length - 1];
              for (var i = 0; i < steps.length; i++) { if (steps[i] >= want) { step = steps[i]; break; } }
              var out = '<rect x="0" y="0" width="' + svg.getAttribute('width') + '" height="22" fill="#fff"/>' +
                '<text x="6" y="15" fill="#495057">simulated time →</text>';
              for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
                var x = X(t); if (x < L - 1) continue;
                out += '<g transform="translate(' + x + ',0)"><line y1="18" y2="' + axisLineEnd +
                  '" stroke="#dee2e6" stroke-dasharray="2,3"/><text y="14" text-anchor="middle" fill="#495057">' +
                  fmt(t) + '</text></g>';
              }
              axis.innerHTML = out;
            }
          }
          function zoom(factor, at) {
            var span = (v1 - v0) * factor, full = T1 - T0;
            span = Math.min(full, Math.max(span, Math.max(full / 2000, 1)));
            var c = v0 + (at - L) / P * (v1 - v0), r = (at - L) / P;
            v0 = c - r * span; v1 = v0 + span; clampView(); draw();
          }
          function clampView() {
            var span = v1 - v0;
            if (v0 < T0) { v0 = T0; v1 = T0 + span; }
            if (v1 > T1) { v1 = T1; v0 = T1 - span; }
          }
          function localX(ev) { var r = svg.getBoundingClientRect(); return (ev.clientX - r.left) * \
        (+svg.getAttribute('width') / r.width); }
          svg.addEventListener('wheel', function (ev) {
            if (!ev.ctrlKey && !ev.shiftKey && !ev.altKey) return;
            ev.preventDefault(); zoom(ev.deltaY > 0 ? 1.25 : 0.8, localX(ev));
          }, { passive: false });
          var drag = null;
          svg.addEventListener('mousedown', function (ev) { drag = { x: localX(ev), v0: v0, v1: v1 }; });
          window.addEventListener('mouseup', function () { drag = null; });
          svg.addEventListener('mousemove', function (ev) {
            if (!drag) return;
            var dt = (localX(ev) - drag.x) / P * (drag.v1 - drag.v0);
            if (Math.abs(dt) < 1e-9) return;
            v0 = drag.v0 - dt; v1 = drag.v1 - dt; clampView(); draw();
          });
          svg.addEventListener('click', function (ev) {
            var g = ev.target.closest ? ev.target.closest('[data-keys]') : null;
            svg.querySelectorAll('.picked').forEach(function (el) { el.classList.remove('picked'); });
            if (!g) return;
            var keys = g.dataset.keys.split(' ').filter(function (k) { return k && !/^(server|broker)$/.test(k); });
            var key = keys[0]; if (!key) return;
            svg.querySelectorAll('[data-keys]').forEach(function (el) {
              if ((' ' + el.dataset.keys + ' ').indexOf(' ' + key + ' ') >= 0) el.classList.add('picked');
            });
            var info = document.getElementById('timeline-picked');
            if (info) info.textContent = 'following ' + key + ' (synclab explain RUNDIR ' + key + ' tells its story)';
          });
          function button(id, f) { var b = document.getElementById(id); if (b) b.addEventListener('click', f); }
          button('tl-in', function () { zoom(0.5, L + P / 2); });
          button('tl-out', function () { zoom(2, L + P / 2); });
          button('tl-reset', function () { v0 = T0; v1 = T1; draw(); });
          document.querySelectorAll('[data-focus-t]').forEach(function (a) {
            a.addEventListener('click', function (ev) {
              ev.preventDefault();
              var t = +a.dataset.focusT, span = Math.max((T1 - T0) / 8, 60);
              v0 = t - span / 2; v1 = t + span / 2; clampView(); draw();
              svg.scrollIntoView({ behavior: 'smooth' });
            });
          });
          // report.html#t=FROM,TO opens zoomed on simulated seconds FROM to TO.
          var m = /[#&]t=([0-9.]+),([0-9.]+)/.exec(window.location.hash || '');
          if (m && +m[2] > +m[1]) { v0 = +m[1]; v1 = +m[2]; clampView(); }
          draw();
          svg.setAttribute('data-view', v0 + ',' + v1);
          svg.setAttribute('data-timeline-ready', '1');
          document.body.setAttribute('data-timeline-ready', '1');
        })();
        </script>

        """

    static let style = """
        .timeline-box{overflow-x:auto;border:1px solid #dee2e6;margin:.5rem 0}
        #timeline{display:block;cursor:grab;user-select:none}
        #timeline g.picked{filter:drop-shadow(0 0 2px #f08c00) drop-shadow(0 0 2px #f08c00)}
        #timeline line.picked{stroke:#f08c00;stroke-opacity:1;stroke-width:3}
        .legend{font-size:12px;line-height:1.9}.legend span{margin-right:.9rem;white-space:nowrap}
        .legend i{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle;border:1px solid \
        #adb5bd}
        .legend svg{vertical-align:middle;margin-right:3px}
        .tl-tools button{font-size:12px;margin-right:.3rem}.rules{font-size:13px;color:#495057}
        .focus-list li{margin:.2rem 0}
        """
}
