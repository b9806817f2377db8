#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
#
# upstream-cases.py TABLES.json OUTDIR [MODE]: turns the packet-flow tables
# of kube-proxy's proxier tests (testdata/upstream/*.json, written by
# scripts/upstream-flows.py) into cases for the table-driven runner
# (cases/run.sh, format: cases/README.md): one case per upstream test,
# one phase per table.
#
# The upstream tests' addresses are moved onto the runner's topology
# (MAP4 below): the node test-node becomes node-a (192.0.2.11, a Node
# object with that InternalIP), its secondary address 192.0.2.12 (local,
# not in the Node object), the pod CIDR 10.0.0.0/8 becomes 10.244.0.0/16
# (--cluster-cidr), ClusterIPs 10.96.0.0/12, LB IPs 198.51.100.0/24,
# externalIPs 203.0.113.0/24, the external client 203.0.113.2 the runner's
# cli (10.0.1.2, behind the node as a router), the blocked external client
# 203.0.113.130 an outside host 10.0.1.130.  Each endpoint address is a pod
# (a netns routed from the node) whose kpx_echo answers with "ADDR:PORT";
# endpoints "on another node" are pods too, only their EndpointSlice's
# nodeName differs.  A flow whose source is the node is sent by the node
# itself; a source that is an endpoint is that pod (hairpin).  A flow the
# upstream table expects kube-proxy to leave alone (output "") must be
# answered by a daemon on the node listening on the destination, on that
# very address (not DNATed).
#
# A flow kpx differs on carries "kpx" in the tables ({"reason", and the
# expectation kpx meets: "expect", "masquerade"; "modes": the proxy modes
# it applies to, default all}); the case asserts kpx's expectation and the
# runner's log names the reason.  Flows the runner cannot send are listed
# in the case's scenario.md and left out: a source address that is a
# LoadBalancer IP, the health-check node port's flows (the iptables
# tables' ACCEPT).  The IPv6 tables keep their pod and node addresses
# (MAP6).  127.0.0.1 (the iptables tables' localhost NodePorts) stays
# itself, sent by the node; a nodePortAddresses of null (the iptables
# proxier's default) is every local address, 0.0.0.0/0 and ::/0.

import ipaddress
import json
import os
import sys

NODE = 'node-a'
UPSTREAM_NODE = 'test-node'

# upstream address -> runner address (IPv4)
MAP4 = [
	('10.180.0.0/16', lambda a: '10.244.%d.%d' % (100 + a.packed[2], a.packed[3])),
	('10.0.0.0/8', lambda a: '10.244.%d.%d' % (a.packed[2], a.packed[3])),
	('172.30.0.0/16', lambda a: '10.96.%d.%d' % (a.packed[2], a.packed[3])),
	('192.168.0.2/32', lambda a: '192.0.2.11'),
	('192.168.1.2/32', lambda a: '192.0.2.12'),
	('192.168.99.0/24', lambda a: '203.0.113.%d' % a.packed[3]),
	('203.0.113.0/24', lambda a: '10.0.1.%d' % a.packed[3]),
	('127.0.0.0/8', lambda a: str(a)),
	('1.2.3.4/32', lambda a: '198.51.100.4'),
	('5.6.7.8/32', lambda a: '198.51.100.8'),
	('9.10.11.12/32', lambda a: '198.51.100.12'),
]
# upstream address -> runner address (IPv6): the IPv6 fake proxier's pod
# and endpoint addresses, the node's addresses (2001:db8::1, its secondary
# 2001:db8:1::2: both put on kpx-node for the IPv6 tables) kept; ClusterIPs
# moved into the runner's service range, the external client to cli.
MAP6 = [
	('fd00:172:30::/64', lambda a: str(ipaddress.ip_address('fd00:10:96::') +
		(int(a) & 0xffff))),
	('2600:5200::/64', lambda a: 'fd00:10:1::2'),
	('fd00:10::/32', lambda a: str(a)),
	('2001:db8::1/128', lambda a: str(a)),
	('2001:db8:1::2/128', lambda a: str(a)),
	('::1/128', lambda a: str(a)),
]
# upstream CIDR -> runner CIDRs, by use
CIDRS = {
	'cluster': {'10.0.0.0/8': ['10.244.0.0/16'], 'fd00:10::/64': ['fd00:10::/64']},
	# the node's own source towards an LB IP is the runner's 10.0.0.1
	'sourceRanges': {'192.168.0.0/24': ['192.0.2.0/24', '10.0.0.0/24'],
		'203.0.113.0/25': ['10.0.1.0/25']},
	'nodePort': {'192.168.0.2/32': ['192.0.2.11/32'], '192.168.0.0/24': ['192.0.2.11/32'],
		'192.168.1.0/24': ['192.0.2.12/32'], '127.0.0.1/32': ['127.0.0.1/32'],
		'127.0.0.0/8': ['127.0.0.0/8'], '2001:db8::1/128': ['2001:db8::1/128'],
		'2001:db8::/64': ['2001:db8::/64'], '2001:db8:1::2/128': ['2001:db8:1::2/128']},
}
CLI = '10.0.1.2'
LB_RANGE = ipaddress.ip_network('198.51.100.0/24')
SERVICE_RANGE = ipaddress.ip_network('10.96.0.0/12')
NODE_ADDRS = {'192.0.2.11', '192.0.2.12', '127.0.0.1', '2001:db8::1', '2001:db8:1::2', '::1'}
NODE_ADDRS6 = ['2001:db8::1/128', '2001:db8:1::2/128']
# nodePortAddresses nil in the iptables proxier: every local address
EVERY_LOCAL = ['0.0.0.0/0', '::/0']
NODE_SRC = '10.0.0.1'
NODE_SRC6 = 'fd00:10::1'


def map_addr(a):
	ip = ipaddress.ip_address(a)
	for net, f in MAP4 if ip.version == 4 else MAP6:
		if ip in ipaddress.ip_network(net):
			return f(ip)
	raise ValueError('no mapping for %s' % a)


def map_cidrs(use, cidrs):
	out = []
	for c in cidrs or []:
		c = c.strip()
		if ':' in c and use == 'sourceRanges':
			continue
		if c not in CIDRS[use]:
			raise ValueError('no mapping for %s CIDR %s' % (use, c))
		out += CIDRS[use][c]
	return out


def split_hostport(hp):
	host, _, port = hp.rpartition(':')
	return host.strip('[]'), int(port)


def hostport(host, port):
	return ('[%s]:%d' if ':' in host else '%s:%d') % (host, port)


def pod_name(addr):
	if addr in (CLI, 'fd00:10:1::2'):
		return 'cli'
	if addr == '10.0.1.130':
		return 'xblk'
	if ':' in addr:
		# "q" and the address's groups after fd00 (a veth name has 15 bytes)
		return 'q' + '-'.join(g for g in addr.split(':')[1:] if g)
	return 'p' + '-'.join(addr.split('.')[2:]) if addr.startswith('10.244.') else None


def map_object(o):
	o = json.loads(json.dumps(o))
	md = o['metadata']
	if o['kind'] == 'Service':
		spec = o['spec']
		if spec.get('clusterIP'):
			spec['clusterIP'] = map_addr(spec['clusterIP'])
			spec['clusterIPs'] = [spec['clusterIP']]
		spec.setdefault('type', 'ClusterIP')
		if spec.get('externalIPs'):
			spec['externalIPs'] = [map_addr(a) for a in spec['externalIPs']]
		if 'loadBalancerSourceRanges' in spec:
			spec['loadBalancerSourceRanges'] = map_cidrs('sourceRanges',
				spec['loadBalancerSourceRanges'])
		for p in spec.get('ports', []):
			p.setdefault('targetPort', p['port'])
			if not p.get('name'):
				p.pop('name', None)
		for ing in o.get('status', {}).get('loadBalancer', {}).get('ingress', []):
			ing['ip'] = map_addr(ing['ip'])
	elif o['kind'] == 'EndpointSlice':
		for ep in o.get('endpoints', []):
			ep['addresses'] = [map_addr(a) for a in ep['addresses']]
			if ep.get('nodeName') == UPSTREAM_NODE:
				ep['nodeName'] = NODE
			elif ep.get('nodeName') is None:
				ep.pop('nodeName', None)
		for p in o.get('ports', []):
			if p.get('name') == '':
				p['name'] = ''
	md.setdefault('annotations', {})
	return o


def node_object():
	return {'apiVersion': 'v1', 'kind': 'Node',
		'metadata': {'name': NODE, 'labels': {'kubernetes.io/hostname': NODE}},
		'spec': {'podCIDR': '10.244.1.0/24', 'podCIDRs': ['10.244.1.0/24']},
		'status': {'addresses': [{'type': 'InternalIP', 'address': '192.0.2.11'},
			{'type': 'Hostname', 'address': NODE}]}}


def obj_key(o):
	return '%s %s %s' % (o['kind'], o['metadata'].get('namespace', '-'), o['metadata']['name'])


def flags_of(settings):
	np = settings['nodePortAddresses']
	np = EVERY_LOCAL if np is None else map_cidrs('nodePort', np)
	f = ['--nodeport-addresses=' + ','.join(np)]
	if settings.get('localhostNodePorts') is False:
		f.append('--iptables-localhost-nodeports=false')
	if settings.get('localDetector') == 'none':
		f.append('--cluster-cidr=')
	else:
		f.append('--cluster-cidr=' + ','.join(map_cidrs('cluster', [settings['clusterCIDR']])))
	if settings.get('masqueradeAll'):
		f.append('--masquerade-all=true')
	return f


def convert_test(test, tables, outdir, mode):
	"""One case: one phase per table of TEST."""
	pods = {}       # name -> set of addresses
	echo = {}       # (name, proto) -> set of ADDR:PORT
	phases = []
	left_out = []
	files = {}
	prev = set()
	hc_ports = {p.get('healthCheckNodePort') for t in tables for o in t['objects']
		if o['kind'] == 'Service' for p in [o['spec']]} - {None}
	added6 = False
	for t in tables:
		tid = '%s/%s/%d' % (test, t['subtest'] or '', t['table'])
		v6 = t['settings']['family'] == 'IPv6'
		objs = [map_object(o) for o in t['objects']]
		for o in objs:
			if o['kind'] != 'EndpointSlice':
				continue
			for ep in o.get('endpoints', []):
				for a in ep['addresses']:
					pods.setdefault(pod_name(a), set()).add(a)
					for p in o.get('ports', []):
						proto = p.get('protocol', 'TCP').lower()
						if proto in ('tcp', 'udp', 'sctp'):
							echo.setdefault((pod_name(a), proto), set()).add(
								hostport(a, p['port']))
		fname = 'table%d.json' % len(files)
		files[fname] = {'apiVersion': 'v1', 'kind': 'List', 'items': objs}
		keys = {obj_key(o) for o in objs}
		clusterips = {o['spec'].get('clusterIP') for o in objs if o['kind'] == 'Service'}
		probes = []
		until = []
		for f in t['flows']:
			why = runnable(f, clusterips, hc_ports)
			if why:
				left_out.append('%s: "%s" (%s)' % (tid, f['name'], why))
				continue
			probe, daemon = probe_of(f, mode)
			req = requires(probe, objs)
			if req:
				probe['requires'] = req
			if daemon:
				echo.setdefault(('node', daemon[0]), set()).add(daemon[1])
			if not probe['from'] in ('cli', 'node'):
				pods.setdefault(probe['from'], set()).add(map_addr(f['source']))
			probes.append(probe)
			if probe.get('verdict', 'answered') == 'answered' and not until:
				until.append({'from': probe['from'], 'protocol': probe['protocol'],
					'destination': probe['destination'], 'verdict': 'answered'})
		phase = {'desc': tid, 'node': NODE, 'flags': flags_of(t['settings']),
			'apply': [fname], 'probes': probes}
		if v6 and not added6:
			# the node's IPv6 addresses, from the first IPv6 table on
			# (the runner removes them when the case ends)
			phase['addrs'] = ['add ' + a for a in NODE_ADDRS6]
			added6 = True
		gone = sorted(prev - keys)
		if gone:
			phase['delete'] = gone
		if until:
			phase['until'] = until
		else:
			phase['pause_s'] = 3
		prev = keys
		phases.append(phase)
	if not phases:
		return None, left_out
	d = os.path.join(outdir, test)
	os.makedirs(d, exist_ok=True)
	for fname, lst in files.items():
		with open(os.path.join(d, fname), 'w') as fh:
			json.dump(lst, fh, indent=1)
	with open(os.path.join(d, 'objects.json'), 'w') as fh:
		json.dump({'apiVersion': 'v1', 'kind': 'List', 'items': [node_object()]}, fh, indent=1)
	pod_rows = []
	for name in sorted(n for n in pods if n not in ('cli', 'node')):
		row = {'name': name, 'ip': sorted(pods[name])}
		row['echo'] = [{'protocol': proto, 'ident': None, 'listen': sorted(l)}
			for (n, proto), l in sorted(echo.items()) if n == name]
		pod_rows.append(row)
	# one kpx_echo per ADDR:PORT, answering with its own ADDR:PORT
	for row in pod_rows:
		row['echo'] = [{'protocol': e['protocol'], 'ident': l, 'listen': [l]}
			for e in row['echo'] for l in e['listen']]
	node_echo = [{'protocol': proto, 'ident': 'node-itself', 'listen': sorted(l)}
		for (n, proto), l in sorted(echo.items()) if n == 'node']
	if node_echo:
		pod_rows.append({'name': 'node', 'echo': node_echo})
	with open(os.path.join(d, 'expect.json'), 'w') as fh:
		json.dump({'pods': pod_rows, 'phases': phases}, fh, indent=1)
	with open(os.path.join(d, 'scenario.md'), 'w') as fh:
		fh.write('# upstream %s (%d tables)\n\n' % (test, len(phases)))
		fh.write('Generated by selftests/cases/upstream-cases.py.\n')
		for l in left_out:
			fh.write('- left out: %s\n' % l)
	return d, left_out


def runnable(f, clusterips, hc_ports=()):
	if f['expect'] == 'ACCEPT' or split_hostport(f['destination'])[1] in hc_ports:
		return ('the health-check node port: kube-proxy\'s firewall accepts it for '
			'its own health server, no proxied flow')
	src = map_addr(f['source'])
	if ipaddress.ip_address(src) in LB_RANGE:
		return 'the source is a LoadBalancer IP, as an outside SNAT would make it'
	host, _ = split_hostport(f['destination'])
	dst = map_addr(host)
	if ipaddress.ip_address(dst) in SERVICE_RANGE and dst not in clusterips:
		return ('an unallocated ClusterIP: the runner routes the service range into a '
			'dummy device, which discards the packet whatever the proxy does')
	return None


def probe_of(f, mode):
	exp, masq = f['expect'], f['masquerade']
	kpx = f.get('kpx')
	if kpx and mode in kpx.get('modes', [mode]):
		exp = kpx.get('expect', exp)
		masq = kpx.get('masquerade', masq)
	src = map_addr(f['source'])
	host, port = split_hostport(f['destination'])
	dst = hostport(map_addr(host), port)
	frm = 'node' if src in NODE_ADDRS else pod_name(src)
	p = {'from': frm, 'protocol': f['protocol'].lower(), 'destination': dst,
		'desc': f['name']}
	daemon = None
	if exp == 'REJECT':
		# refused at once: well under a drop's timeout, with room for
		# a loaded TCG host (one refusal of 106 ms seen against 100)
		p['verdict'] = 'refused'
		p['timeout_ms'] = 300
	elif exp == 'DROP':
		p['verdict'] = 'dropped'
	elif exp == 'NONE' and ipaddress.ip_address(map_addr(host)) in SERVICE_RANGE:
		# left alone towards a ClusterIP (a port the Service does not
		# have, the iptables tables): neither DNATed nor refused, it
		# follows the runner's service route into a dummy device
		p['verdict'] = 'dropped'
	elif exp == 'NONE':
		# the runner names a backend by the address it answered on:
		# the destination itself, no DNAT
		p['backends'] = [dst]
		p['service'] = False
		if frm != 'node':
			p['source'] = 'kept'
		daemon = (p['protocol'], dst)
	else:
		backs = []
		for e in exp:
			h, pt = split_hostport(e)
			backs.append(hostport(map_addr(h), pt))
		p['backends'] = backs
		p['count'] = max(2, 2 * len(backs))
		mine = map_addr(f['source'])
		own = [b for b in backs if split_hostport(b)[0] == mine]
		if frm == 'node' and masq:
			p['source'] = 'masqueraded'
		elif frm == 'node':
			# unmasqueraded, the node's own source for the destination:
			# the runner routes the Service ranges with src 10.0.0.1
			p['source'] = map_addr(host) if map_addr(host) in NODE_ADDRS else \
				NODE_SRC6 if ':' in host else NODE_SRC
		elif not masq:
			p['source'] = 'kept'
		elif own and len(own) < len(backs):
			# a hairpin among other endpoints: the runner's hairpin check
			# tells them apart by ident, here ADDR:PORT, not the pod's name
			p['source'] = None
		else:
			p['source'] = 'masqueraded'
		if p['source'] is None:
			del p['source']
	return p, daemon


def requires(probe, objs):
	"""The proxy-mode feature (mode_lib.sh MODE_LACKS) a flow needs."""
	host, port = split_hostport(probe['destination'])
	proto = probe['protocol'].upper()
	svcs = [o for o in objs if o['kind'] == 'Service']
	if probe.get('verdict') == 'refused':
		for svc in svcs:
			if svc['spec'].get('clusterIP') == host and not any(
					p['port'] == port and p.get('protocol', 'TCP') == proto
					for p in svc['spec'].get('ports', [])):
				return 'clusterip-reject'
	if probe['from'] in ('cli', 'node', 'xblk') or not probe.get('backends'):
		return None
	for svc in svcs:
		spec = svc['spec']
		if spec.get('externalTrafficPolicy') != 'Local':
			continue
		ext = set(spec.get('externalIPs', [])) | {i['ip'] for i in
			svc.get('status', {}).get('loadBalancer', {}).get('ingress', [])}
		hit = any(p['port'] == port for p in spec['ports']) and host in ext or \
			any(p.get('nodePort') == port for p in spec['ports']) and host in NODE_ADDRS
		if not hit:
			continue
		local = set()
		for o in objs:
			if o['kind'] == 'EndpointSlice' and o['metadata']['labels'][
					'kubernetes.io/service-name'] == svc['metadata']['name'] and \
					o['metadata']['namespace'] == svc['metadata']['namespace']:
				for ep in o.get('endpoints', []):
					if ep.get('nodeName') == NODE:
						local |= set(ep['addresses'])
		if any(split_hostport(b)[0] not in local for b in probe['backends']):
			return 'etp-local-shortcut'
	return None


def main():
	if len(sys.argv) < 3:
		print('usage: upstream-cases.py TABLES.json OUTDIR [MODE]', file=sys.stderr)
		return 2
	mode = sys.argv[3] if len(sys.argv) > 3 else 'kpx'
	with open(sys.argv[1]) as fh:
		doc = json.load(fh)
	by_test = {}
	for t in doc['tables']:
		by_test.setdefault(t['test'], []).append(t)
	for test, tables in by_test.items():
		d, left = convert_test(test, tables, sys.argv[2], mode)
		print('%s %d %d' % (test, sum(len(t['flows']) for t in tables), len(left)))
	return 0


if __name__ == '__main__':
	sys.exit(main())
