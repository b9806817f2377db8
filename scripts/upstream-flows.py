#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
#
# upstream-flows.py: reads kube-proxy's proxier tests (a kubernetes/kubernetes
# checkout at a commit, or the file itself) and writes, as JSON, every packet
# flow table those tests check (runPacketFlowTests) with the Services,
# EndpointSlices and proxier settings in force when the table is checked.
#
#   upstream-flows.py --git DIR --commit C --path pkg/proxy/nftables/proxier_test.go -o OUT
#   upstream-flows.py --file F --commit C --path P [--repository FORK] -o OUT
#
# Both proxiers' test files are understood: the nftables one
# (NewFakeProxier(family)) and the iptables one (NewFakeProxier(ipt) over
# a fake iptables of a family; its localhostNodePorts and nil
# nodePortAddresses, every local address, kept in the settings).
#
# It does not run Go: it tokenizes the file and interprets the small subset
# of Go the tests build their state with (assignments, if/else, range loops
# over test-case tables, t.Run, composite literals, closures passed to
# makeTestService/makeTestEndpointSlice, the fake proxier's event calls).
# What it cannot interpret is skipped and listed in the output ("skipped").
# One step is a rule of this script rather than an interpretation, named
# in the output where it applies: TestInternalExternalMasquerade merges
# its base table with each case's overrides in a loop over indexes, which
# is reproduced here (merge_overrides).
#
# --differences FILE (JSON, hand-written): per flow, kpx's known
# differences {"TEST/SUBTEST/TABLE/FLOW": {"reason": ...}}, copied into the
# flows they name.

import argparse
import copy
import json
import re
import subprocess
import sys


class Unknown:
	"""A value the interpreter could not compute."""

	def __init__(self, why=''):
		self.why = why

	def __bool__(self):
		return False

	def __eq__(self, other):
		return False

	def __ne__(self, other):
		return False

	def __hash__(self):
		return 0

	def __repr__(self):
		return 'Unknown(%s)' % self.why


# ---- tokens

TOKEN_RE = re.compile(r'''
	(?P<ws>[ \t\r]+)
	|(?P<nl>\n)
	|(?P<lcomment>//[^\n]*)
	|(?P<bcomment>/\*.*?\*/)
	|(?P<raw>`[^`]*`)
	|(?P<str>"(?:[^"\\\n]|\\.)*")
	|(?P<rune>'(?:[^'\\\n]|\\.)+')
	|(?P<num>0[xX][0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9]+)?)
	|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
	|(?P<op>\.\.\.|:=|==|!=|<=|>=|&&|\|\||<-|\+\+|--|\+=|-=|[-+*/%&|^<>=!(){}\[\],;:.~])
''', re.S | re.X)

# tokens after which a newline ends the statement (Go's semicolon rule)
SEMI_AFTER = {'ident', 'str', 'raw', 'rune', 'num'}
SEMI_AFTER_OPS = {')', ']', '}', '++', '--'}
SEMI_AFTER_KW = {'break', 'continue', 'fallthrough', 'return'}


def tokenize(text):
	toks = []
	pos = 0
	while pos < len(text):
		m = TOKEN_RE.match(text, pos)
		if not m:
			raise SyntaxError('bad character %r at %d' % (text[pos], pos))
		kind = m.lastgroup
		val = m.group(kind)
		pos = m.end()
		if kind in ('ws', 'lcomment'):
			continue
		if kind == 'bcomment':
			if '\n' in val:
				kind = 'nl'
			else:
				continue
		if kind == 'nl':
			if toks:
				k, v = toks[-1]
				if k in SEMI_AFTER or (k == 'op' and v in SEMI_AFTER_OPS):
					toks.append(('op', ';'))
			continue
		toks.append((kind, val))
	toks.append(('op', ';'))
	toks.append(('eof', ''))
	return toks


def go_string(kind, val):
	if kind == 'raw':
		return val[1:-1]
	return json.loads(val) if '\\' not in val else bytes(
		val[1:-1], 'utf-8').decode('unicode_escape')


# ---- syntax: expressions are tuples ('kind', ...)

class Parser:
	def __init__(self, toks, pos=0):
		self.t = toks
		self.p = pos

	def peek(self, off=0):
		return self.t[self.p + off]

	def at(self, val, off=0):
		k, v = self.t[self.p + off]
		return k in ('op', 'ident') and v == val

	def next(self):
		tok = self.t[self.p]
		self.p += 1
		return tok

	def expect(self, val):
		k, v = self.next()
		if v != val:
			raise SyntaxError('expected %r, got %r' % (val, v))

	def skip_balanced(self):
		"""Skip one bracketed group starting at the current token."""
		pairs = {'(': ')', '[': ']', '{': '}'}
		stack = [pairs[self.next()[1]]]
		while stack:
			k, v = self.next()
			if k == 'eof':
				raise SyntaxError('unbalanced')
			if k == 'op' and v in pairs:
				stack.append(pairs[v])
			elif k == 'op' and v == stack[-1]:
				stack.pop()

	def skip_statement(self):
		pairs = {'(': ')', '[': ']', '{': '}'}
		while True:
			k, v = self.peek()
			if k == 'eof' or (k == 'op' and v in (';', '}')):
				if v == ';':
					self.next()
				return
			if k == 'op' and v in pairs:
				self.skip_balanced()
			else:
				self.next()

	# -- types (kept as strings; only their names matter)
	def parse_type(self):
		k, v = self.peek()
		if v == '*':
			self.next()
			return '*' + self.parse_type()
		if v == '[':
			self.next()
			if not self.at(']'):
				self.parse_expr()
			self.expect(']')
			inner = self.parse_type()
			return ('slice', inner) if isinstance(inner, tuple) else '[]' + inner
		if v == 'map':
			self.next()
			self.expect('[')
			kt = self.parse_type()
			self.expect(']')
			return 'map[%s]%s' % (kt, self.parse_type())
		if v == 'struct':
			self.next()
			fields = []
			self.expect('{')
			while not self.at('}'):
				if self.at(';'):
					self.next()
					continue
				names = [self.next()[1]]
				while self.at(','):
					self.next()
					names.append(self.next()[1])
				self.parse_type()
				fields.extend(names)
			self.expect('}')
			return ('struct', tuple(fields))
		if v == 'func':
			self.next()
			self.skip_balanced()
			if self.at('('):
				self.skip_balanced()
			elif not self.at('{') and not self.at(';') and not self.at(','):
				self.parse_type()
			return 'func'
		if k == 'ident':
			self.next()
			name = v
			if self.at('.'):
				self.next()
				name += '.' + self.next()[1]
			return name
		raise SyntaxError('type expected, got %r' % v)

	# -- expressions
	def parse_expr(self, nolit=False):
		return self.parse_binary(0, nolit)

	PREC = {'||': 1, '&&': 2, '==': 3, '!=': 3, '<': 3, '<=': 3, '>': 3,
		'>=': 3, '+': 4, '-': 4, '|': 4, '*': 5, '/': 5, '%': 5, '&': 5}

	def parse_binary(self, minp, nolit):
		left = self.parse_unary(nolit)
		while True:
			k, v = self.peek()
			p = self.PREC.get(v) if k == 'op' else None
			if p is None or p <= minp:
				return left
			self.next()
			right = self.parse_binary(p, nolit)
			left = ('bin', v, left, right)

	def parse_unary(self, nolit):
		k, v = self.peek()
		if k == 'op' and v in ('&', '!', '-', '*', '+'):
			self.next()
			return ('un', v, self.parse_unary(nolit))
		return self.parse_postfix(self.parse_primary(nolit), nolit)

	def parse_primary(self, nolit):
		k, v = self.peek()
		if k in ('str', 'raw'):
			self.next()
			return ('lit', go_string(k, v))
		if k == 'num':
			self.next()
			return ('lit', int(v.replace('_', ''), 0) if '.' not in v else float(v))
		if k == 'rune':
			self.next()
			return ('lit', v)
		if k == 'op' and v == '(':
			self.next()
			e = self.parse_expr()
			self.expect(')')
			return e
		if k == 'ident' and v == 'func':
			self.next()
			params = self.parse_params()
			if self.at('('):
				self.skip_balanced()
			elif not self.at('{'):
				self.parse_type()
			body = self.parse_block()
			return ('func', params, body)
		if (k == 'op' and v == '[') or (k == 'ident' and v in ('map', 'struct')):
			typ = self.parse_type()
			if self.at('{'):
				return self.parse_complit(typ)
			if self.at('('):  # conversion
				self.next()
				e = self.parse_expr()
				self.expect(')')
				return e
			return ('type', typ)
		if k == 'ident':
			self.next()
			return ('id', v)
		raise SyntaxError('unexpected %r' % v)

	def parse_params(self):
		"""(a, b T, c *U) -> ['a', 'b', 'c']"""
		names = []
		self.expect('(')
		while not self.at(')'):
			group = [self.next()[1]]
			while self.at(','):
				self.next()
				group.append(self.next()[1])
			if not self.at(')') and not self.at(','):
				self.parse_type()
				names.extend(group)
			if self.at(','):
				self.next()
		self.expect(')')
		return names

	def parse_postfix(self, e, nolit):
		while True:
			k, v = self.peek()
			if k != 'op':
				return e
			if v == '.':
				self.next()
				e = ('sel', e, self.next()[1])
			elif v == '(':
				self.next()
				args = []
				while not self.at(')'):
					args.append(self.parse_expr())
					if self.at('...'):
						self.next()
						args[-1] = ('spread', args[-1])
					if self.at(','):
						self.next()
				self.expect(')')
				e = ('call', e, args)
			elif v == '[':
				self.next()
				idx = self.parse_expr() if not self.at(']') else None
				if self.at(':'):
					self.next()
					if not self.at(']'):
						self.parse_expr()
				self.expect(']')
				e = ('index', e, idx)
			elif v == '{' and not nolit and e[0] in ('id', 'sel', 'index'):
				e = self.parse_complit(type_name(e))
			else:
				return e

	def parse_complit(self, typ):
		self.expect('{')
		elems = []
		while not self.at('}'):
			if self.at(';'):
				self.next()
				continue
			if self.at('{'):
				first = self.parse_complit(None)
			else:
				first = self.parse_expr()
			if self.at(':'):
				self.next()
				if self.at('{'):
					val = self.parse_complit(None)
				else:
					val = self.parse_expr()
				elems.append((first, val))
			else:
				elems.append((None, first))
			if self.at(','):
				self.next()
		self.expect('}')
		return ('complit', typ, elems)

	# -- statements
	def parse_block(self):
		self.expect('{')
		stmts = []
		while not self.at('}'):
			if self.at(';'):
				self.next()
				continue
			start = self.p
			try:
				s = self.parse_stmt()
				if s is not None:
					stmts.append(s)
			except (SyntaxError, IndexError, KeyError, TypeError) as err:
				self.p = start
				self.skip_statement()
				stmts.append(('skipped', str(err)))
			if self.at(';'):
				self.next()
		self.expect('}')
		return stmts

	def parse_simple(self, nolit=False):
		lhs = [self.parse_expr(nolit)]
		while self.at(','):
			self.next()
			lhs.append(self.parse_expr(nolit))
		k, v = self.peek()
		if v in (':=', '=', '+=', '-='):
			self.next()
			if self.at('range'):
				self.next()
				return ('range', lhs, self.parse_expr(True))
			rhs = [self.parse_expr(nolit)]
			while self.at(','):
				self.next()
				rhs.append(self.parse_expr(nolit))
			return ('assign', v, lhs, rhs)
		if v in ('++', '--'):
			self.next()
			return ('incdec', lhs[0])
		return ('expr', lhs[0])

	def parse_stmt(self):
		k, v = self.peek()
		if k == 'ident' and v == 'var':
			self.next()
			names = [self.next()[1]]
			while self.at(','):
				self.next()
				names.append(self.next()[1])
			typ = None
			if not self.at('='):
				typ = self.parse_type()
			vals = []
			if self.at('='):
				self.next()
				vals.append(self.parse_expr())
				while self.at(','):
					self.next()
					vals.append(self.parse_expr())
			return ('var', names, typ, vals)
		if k == 'ident' and v == 'type':
			self.next()
			name = self.next()[1]
			return ('typedecl', name, self.parse_type())
		if k == 'ident' and v == 'if':
			self.next()
			init = None
			cond = self.parse_simple(True)
			if self.at(';'):
				self.next()
				init = cond
				cond = self.parse_simple(True)
			body = self.parse_block()
			orelse = []
			if self.at('else'):
				self.next()
				if self.at('if'):
					orelse = [self.parse_stmt()]
				else:
					orelse = self.parse_block()
			return ('if', init, cond, body, orelse)
		if k == 'ident' and v == 'for':
			self.next()
			head = None
			if not self.at('{'):
				head = self.parse_simple(True)
				if self.at(';'):  # three-clause loop: not interpreted
					while not self.at('{'):
						self.next()
					head = None
			body = self.parse_block()
			return ('for', head, body)
		if k == 'ident' and v in ('return', 'defer', 'go', 'switch', 'select',
					'break', 'continue', 'goto'):
			self.skip_statement()
			return None
		if k == 'op' and v == '{':
			return ('block', self.parse_block())
		return self.parse_simple()


def type_name(e):
	if e[0] == 'id':
		return e[1]
	if e[0] == 'sel':
		base = type_name(e[1])
		return None if base is None else base + '.' + e[2]
	if e[0] == 'index':
		return type_name(e[1])
	return None


# ---- Kubernetes names

K8S_PACKAGES = ('v1', 'discovery', 'metav1')
JSON_NAMES = {'ObjectMeta': 'metadata', 'Spec': 'spec', 'Status': 'status',
	'IP': 'ip', 'IPMode': 'ipMode'}


def json_name(go):
	if go in JSON_NAMES:
		return JSON_NAMES[go]
	return go[:1].lower() + go[1:]


CONST_PREFIXES = ('ServiceExternalTrafficPolicy', 'ServiceInternalTrafficPolicy',
	'ServiceType', 'ServiceAffinity', 'Protocol', 'AddressType',
	'LoadBalancerIPMode')


def k8s_const(name):
	pkg, _, sym = name.partition('.')
	if name == 'discovery.LabelServiceName':
		return 'kubernetes.io/service-name'
	if name == 'v1.ClusterIPNone':
		return 'None'
	if sym.endswith('Protocol') and sym.startswith('IPv'):
		return sym[:-len('Protocol')]
	for pre in CONST_PREFIXES:
		if sym.startswith(pre) and len(sym) > len(pre):
			return sym[len(pre):]
	return Unknown(name)


KINDS = {'v1.Service': ('v1', 'Service'),
	'discovery.EndpointSlice': ('discovery.k8s.io/v1', 'EndpointSlice')}


def go_sprintf(fmt, args):
	out = []
	i = 0
	args = list(args)
	for m in re.finditer(r'%([-+# 0]*[0-9]*)([sdvq%])', fmt):
		out.append(fmt[i:m.start()])
		i = m.end()
		if m.group(2) == '%':
			out.append('%')
			continue
		a = args.pop(0) if args else Unknown('sprintf')
		out.append(json.dumps(a) if m.group(2) == 'q' else str(a))
	out.append(fmt[i:])
	return ''.join(out)


def join_host_port(host, port):
	return '[%s]:%s' % (host, port) if ':' in str(host) else '%s:%s' % (host, port)


# ---- interpretation

class Proxier:
	"""The fake proxier's state a packet-flow table is checked against."""

	def __init__(self, settings):
		self.settings = settings
		self.objects = []

	def add(self, obj):
		if not isinstance(obj, dict) or 'kind' not in obj:
			return
		key = (obj['kind'], obj['metadata'].get('namespace'), obj['metadata'].get('name'))
		self.objects = [o for o in self.objects if (o['kind'], o['metadata'].get('namespace'),
			o['metadata'].get('name')) != key]
		self.objects.append(copy.deepcopy(obj))

	def delete(self, obj):
		if not isinstance(obj, dict) or 'kind' not in obj:
			return
		self.objects = [o for o in self.objects if not (o['kind'] == obj['kind'] and
			o['metadata'] == obj['metadata'])]


class Func:
	def __init__(self, params, body, env):
		self.params = params
		self.body = body
		self.env = env


class Interp:
	def __init__(self, globals_, funcs, out, test):
		self.globals = globals_
		self.funcs = funcs
		self.out = out
		self.test = test
		self.subtest = []
		self.skipped = []
		self.rules = []

	# -- values
	def lookup(self, env, name):
		for scope in reversed(env):
			if name in scope:
				return scope[name]
		if name in self.globals:
			return self.globals[name]
		if name in ('nil',):
			return None
		if name in ('true', 'false'):
			return name == 'true'
		return Unknown(name)

	def assign_name(self, env, name, val, define):
		if name == '_':
			return
		if not define:
			for scope in reversed(env):
				if name in scope:
					scope[name] = val
					return
		env[-1][name] = val

	def eval(self, e, env, k8s=False, elem_type=None):
		kind = e[0]
		if kind == 'lit':
			return e[1]
		if kind == 'id':
			return self.lookup(env, e[1])
		if kind == 'type':
			return Unknown('type')
		if kind == 'un':
			v = self.eval(e[2], env, k8s)
			if e[1] == '!':
				return Unknown('!') if isinstance(v, Unknown) else not v
			if e[1] == '-':
				return -v if isinstance(v, (int, float)) else Unknown('-')
			return v
		if kind == 'bin':
			a = self.eval(e[2], env)
			b = self.eval(e[3], env)
			op = e[1]
			if isinstance(a, Unknown) or isinstance(b, Unknown):
				return Unknown('bin')
			if op == '==':
				return a == b
			if op == '!=':
				return a != b
			if op == '&&':
				return a and b
			if op == '||':
				return a or b
			if op == '+':
				return a + b
			if op == '-':
				return a - b
			if op == '*':
				return a * b
			return Unknown(op)
		if kind == 'sel':
			name = type_name(e)
			if name and name.split('.')[0] in K8S_PACKAGES and \
					isinstance(self.lookup(env, name.split('.')[0]), Unknown):
				return k8s_const(name)
			base = self.eval(e[1], env)
			return self.field(base, e[2])
		if kind == 'index':
			base = self.eval(e[1], env)
			idx = self.eval(e[2], env) if e[2] else None
			try:
				return base[idx]
			except (TypeError, KeyError, IndexError):
				return base if isinstance(base, Func) else Unknown('index')
		if kind == 'complit':
			return self.complit(e, env, k8s, elem_type)
		if kind == 'func':
			return Func(e[1], e[2], list(env))
		if kind == 'call':
			return self.call(e, env)
		if kind == 'spread':
			return self.eval(e[1], env)
		return Unknown(kind)

	def field(self, base, name):
		if isinstance(base, dict):
			for key in (name, json_name(name)):
				if key in base:
					return base[key]
			for v in base.values():  # embedded struct (NamespacedName)
				if isinstance(v, dict):
					f = self.field(v, name)
					if not isinstance(f, Unknown):
						return f
		return Unknown('.' + name)

	def complit(self, e, env, k8s, elem_type):
		typ = e[1] if e[1] is not None else elem_type
		tname = typ if isinstance(typ, str) else ''
		pkg = tname.lstrip('[]*&').split('.')[0]
		k8s = k8s or pkg in K8S_PACKAGES
		if tname.startswith('[]'):
			inner = tname[2:]
			return [self.eval(v, env, k8s, inner) for _, v in e[2]]
		if isinstance(typ, tuple) and typ[0] == 'slice':  # []struct{...}
			return [self.eval(v, env, k8s, typ[1]) for _, v in e[2]]
		if isinstance(typ, tuple):  # anonymous struct
			return self.struct(e[2], typ[1], env, k8s)
		if tname.startswith('[]') is False and tname.startswith('map['):
			inner = tname[tname.index(']') + 1:]
			return {self.eval(k, env): self.eval(v, env, k8s, inner) for k, v in e[2]}
		base = tname.lstrip('*')
		struct_fields = self.lookup(env, '\0type ' + base)
		if isinstance(struct_fields, tuple):
			return self.struct(e[2], struct_fields, env, k8s)
		obj = {}
		for key, val in e[2]:
			if key is None:
				continue
			name = key[1] if key[0] == 'id' else str(self.eval(key, env))
			obj[json_name(name) if k8s else name] = self.eval(val, env, k8s)
		if base in KINDS:
			api, kind = KINDS[base]
			obj = dict([('apiVersion', api), ('kind', kind)] + list(obj.items()))
		return obj

	def struct(self, elems, fields, env, k8s):
		obj = {}
		for i, (key, val) in enumerate(elems):
			name = key[1] if key is not None else fields[i]
			obj[name] = self.eval(val, env, k8s)
		return obj

	def set_path(self, target, path, val):
		"""svc.Spec.Ports = ... on a Kubernetes object (JSON names)."""
		for name in path[:-1]:
			target = target.setdefault(json_name(name), {})
		target[json_name(path[-1])] = val

	def call(self, e, env):
		fn = e[1]
		name = type_name(fn) or ''
		args = e[2]

		def arg(i, **kw):
			return self.eval(args[i], env, **kw)

		if name in ('ptr.To', 'int32', 'int', 'intstr.FromInt32', 'intstr.FromInt',
				'intstr.FromString', 'string'):
			return arg(0)
		if name == 'makeNSN':
			return {'Namespace': arg(0), 'Name': arg(1)}
		if name == 'fmt.Sprintf':
			return go_sprintf(arg(0), [arg(i) for i in range(1, len(args))])
		if name == 'net.JoinHostPort':
			return join_host_port(arg(0), arg(1))
		if name == 'append':
			base = arg(0)
			base = list(base) if isinstance(base, list) else []
			return base + [arg(i) for i in range(1, len(args))]
		if name == 'getLine':
			return None
		if name == 'makeTestService':
			svc = {'apiVersion': 'v1', 'kind': 'Service',
				'metadata': {'name': arg(1), 'namespace': arg(0)},
				'spec': {}, 'status': {}}
			self.run_func(arg(2), [svc])
			return svc
		if name == 'makeTestEndpointSlice':
			eps = {'apiVersion': 'discovery.k8s.io/v1', 'kind': 'EndpointSlice',
				'metadata': {'name': '%s-%s' % (arg(1), arg(2)), 'namespace': arg(0),
					'labels': {'kubernetes.io/service-name': arg(1)}}}
			self.run_func(arg(3), [eps])
			return eps
		if name == 'NewFakeProxier':
			return self.new_proxier(arg(0))
		if name in IPT_FAKES:
			return {IPT_KEY: IPT_FAKES[name]}
		if name in ('makeServiceMap', 'populateEndpointSlices'):
			fp = arg(0)
			for i in range(1, len(args)):
				v = arg(i)
				for obj in (v if isinstance(v, list) else [v]):
					if isinstance(fp, Proxier):
						fp.add(obj)
			return None
		if name == 'runPacketFlowTests':
			self.emit(env, arg(1), arg(3), arg(4), args[4])
			return None
		if name.endswith('.Run') and len(args) == 2:
			self.subtest.append(str(arg(0)))
			self.run_func(arg(1), [None])
			self.subtest.pop()
			return None
		if fn[0] == 'sel':
			recv = self.eval(fn[1], env)
			if isinstance(recv, dict) and IPT_KEY in recv and fn[2] == 'IsIPv6':
				return recv[IPT_KEY] == 'IPv6'
			if isinstance(recv, Proxier):
				if fn[2] in ('OnServiceAdd', 'OnEndpointSliceAdd'):
					recv.add(arg(0))
				elif fn[2] in ('OnServiceUpdate', 'OnEndpointSliceUpdate'):
					recv.delete(arg(0))
					recv.add(arg(1))
				elif fn[2] in ('OnServiceDelete', 'OnEndpointSliceDelete'):
					recv.delete(arg(0))
				return None
			if name == 'proxyutil.NewNoOpLocalDetector':
				return 'none'
			if name == 'proxyutil.NewDetectLocalByCIDR':
				return arg(0)
			if name == 'proxyutil.NewNodePortAddresses':
				return arg(1)
			return Unknown(name)
		f = self.eval(fn, env)
		if isinstance(f, Func):
			return self.run_func(f, [arg(i) for i in range(len(args))])
		return Unknown('call ' + name)

	def new_proxier(self, family):
		"""The settings NewFakeProxier gives a proxier of FAMILY (the
		nftables tests), or of the fake iptables interface it is given
		(the iptables tests)."""
		if isinstance(family, dict) and IPT_KEY in family:
			return self.new_ipt_proxier(family)
		fn = self.funcs.get('NewFakeProxier')
		settings = {'family': family}
		if fn:
			env = [{fn.params[0]: family}] if fn.params else [{}]
			self.exec_block(fn.body, env)
			scope = env[-1]
			settings['clusterCIDR'] = scope.get('podCIDR')
			settings['serviceCIDR'] = scope.get('serviceCIDRs')
			settings['localDetector'] = 'ClusterCIDR'
			settings['nodePortAddresses'] = scope.get('nodePortAddresses')
			settings['masqueradeAll'] = False
		fp = Proxier(settings)
		return [Unknown('nft'), fp]

	def new_ipt_proxier(self, ipt):
		"""The iptables NewFakeProxier(ipt): its Proxier literal's fields
		(localhostNodePorts, nodePortAddresses; nil is every local
		address) and the pod CIDR its local detector is built from."""
		fn = self.funcs.get('NewFakeProxier')
		settings = {'family': ipt[IPT_KEY]}
		if fn:
			env = [{fn.params[0]: ipt}] if fn.params else [{}]
			self.exec_block(fn.body, env)
			scope = env[-1]
			p = scope.get('p')
			p = p if isinstance(p, dict) else {}
			fam = scope.get('ipfamily')
			settings['family'] = fam if isinstance(fam, str) else ipt[IPT_KEY]
			settings['clusterCIDR'] = scope.get('podCIDR')
			settings['localDetector'] = 'ClusterCIDR'
			settings['nodePortAddresses'] = p.get('nodePortAddresses')
			settings['masqueradeAll'] = bool(p.get('masqueradeAll', False))
			settings['localhostNodePorts'] = bool(p.get('localhostNodePorts', False))
		return Proxier(settings)

	def run_func(self, f, args):
		if not isinstance(f, Func):
			return Unknown('not a func')
		scope = {}
		for i, p in enumerate(f.params):
			scope[p] = args[i] if i < len(args) else None
		env = f.env + [scope]
		self.exec_block(f.body, env)
		return None

	def emit(self, env, line, local_ips, flows, flows_expr):
		rule = None
		if isinstance(flows, Unknown) and self.test in MERGE_RULES:
			flows = MERGE_RULES[self.test](self, env)
			rule = MERGE_RULE_TEXT[self.test]
		fp = None
		for scope in reversed(env):
			for v in scope.values():
				if isinstance(v, Proxier):
					fp = v
					break
			if fp:
				break
		table = {
			'test': self.test,
			'subtest': '/'.join(self.subtest) or None,
			'extraction': 'mechanical' if rule is None else 'mechanical, flows merged by a rule',
			'settings': copy.deepcopy(fp.settings) if fp else None,
			'localAddresses': local_ips if isinstance(local_ips, list) else None,
			'objects': drop_nil(fp.objects) if fp else [],
			'flows': [normalize_flow(f) for f in (flows if isinstance(flows, list) else [])],
		}
		if rule:
			table['rule'] = rule
		if not isinstance(flows, list):
			table['extraction'] = 'not extracted: flows %s' % flows
		self.out.append(table)

	# -- statements
	def exec_block(self, stmts, env):
		for s in stmts:
			self.exec_stmt(s, env)

	def exec_stmt(self, s, env):
		kind = s[0]
		if kind == 'skipped':
			self.skipped.append(s[1])
		elif kind == 'var':
			names, typ, vals = s[1], s[2], s[3]
			for i, n in enumerate(names):
				v = self.eval(vals[i], env) if i < len(vals) else zero(typ)
				self.assign_name(env, n, v, True)
		elif kind == 'typedecl':
			if isinstance(s[2], tuple):
				env[-1]['\0type ' + s[1]] = s[2][1]
		elif kind == 'assign':
			self.exec_assign(s, env)
		elif kind == 'expr':
			self.eval(s[1], env)
		elif kind == 'if':
			env2 = env + [{}]
			if s[1]:
				self.exec_stmt(s[1], env2)
			cond = s[2][1] if s[2][0] == 'expr' else Unknown('cond')
			c = self.eval(cond, env2) if not isinstance(cond, Unknown) else cond
			if isinstance(c, Unknown):
				self.skipped.append('if: condition not computed (%s)' % c.why)
				return
			self.exec_block(s[3] if c else s[4], env2 + [{}])
		elif kind == 'for':
			head = s[1]
			if head is None or head[0] != 'range' or len(head[1]) != 2:
				return  # index loops and bare loops are not interpreted
			seq = self.eval(head[2], env)
			if not isinstance(seq, list):
				self.skipped.append('for: range over %r' % seq)
				return
			var = head[1][1][1]
			for item in seq:
				self.exec_block(s[2], env + [{var: item}])
		elif kind == 'block':
			self.exec_block(s[1], env + [{}])

	def exec_assign(self, s, env):
		op, lhs, rhs = s[1], s[2], s[3]
		if len(rhs) == 1 and len(lhs) > 1:
			vals = self.eval(rhs[0], env)
			vals = vals if isinstance(vals, list) and len(vals) == len(lhs) else \
				[Unknown('multi')] * len(lhs)
		else:
			vals = [self.eval(r, env) for r in rhs]
		for target, val in zip(lhs, vals):
			if target[0] == 'id':
				self.assign_name(env, target[1], val, op == ':=')
				continue
			# a field of an object or of the proxier
			path = []
			t = target
			while t[0] == 'sel':
				path.insert(0, t[2])
				t = t[1]
			if t[0] != 'id' or not path:
				self.skipped.append('assignment to %s' % (t,))
				continue
			base = self.lookup(env, t[1])
			if isinstance(base, Proxier):
				self.set_setting(base, path[0], val)
			elif isinstance(base, dict):
				self.set_path(base, path, val)

	def set_setting(self, fp, name, val):
		if name == 'masqueradeAll':
			fp.settings['masqueradeAll'] = val
		elif name == 'localDetector':
			fp.settings['localDetector'] = 'none' if val == 'none' else 'ClusterCIDR'
		elif name == 'nodePortAddresses':
			fp.settings['nodePortAddresses'] = val
		elif name == 'localhostNodePorts':
			fp.settings['localhostNodePorts'] = val


def drop_nil(v):
	"""A copy without the fields set to nil (absent in the API's JSON)."""
	if isinstance(v, dict):
		return {k: drop_nil(x) for k, x in v.items() if x is not None}
	if isinstance(v, list):
		return [drop_nil(x) for x in v]
	return v


def zero(typ):
	if typ in ('string',):
		return ''
	if typ in ('int', 'int32', 'bool'):
		return 0 if typ != 'bool' else False
	return None


def normalize_flow(f):
	out = f.get('output', '')
	if out in ('REJECT', 'DROP', 'ACCEPT'):
		expect = out
	elif out == '' or out is None:
		expect = 'NONE'
	else:
		expect = [x.strip() for x in str(out).split(',')]
	return {
		'name': f.get('name'),
		'source': f.get('sourceIP'),
		'protocol': f.get('protocol') or 'TCP',
		'destination': join_host_port(f.get('destIP'), f.get('destPort')),
		'expect': expect,
		'masquerade': bool(f.get('masq', False)),
	}


def merge_overrides(interp, env):
	"""TestInternalExternalMasquerade: its base table (flowTests) with the
	case's overrides (tc.overrides: name -> {output, masq}) applied."""
	base = interp.lookup(env, 'flowTests')
	tc = interp.lookup(env, 'tc')
	if not isinstance(base, list) or not isinstance(tc, dict):
		return Unknown('merge')
	over = tc.get('overrides') or {}
	flows = []
	for f in base:
		f = dict(f)
		o = over.get(f.get('name'))
		if o:
			if o.get('masq') is not None:
				f['masq'] = o['masq']
			if o.get('output') is not None:
				f['output'] = o['output']
		flows.append(f)
	return flows


# the iptables tests' fake iptables interfaces, by constructor: their family
IPT_FAKES = {'iptablestest.NewFake': 'IPv4', 'iptablestest.NewIPv6Fake': 'IPv6'}
IPT_KEY = '\0ipt'

MERGE_RULES = {'TestInternalExternalMasquerade': merge_overrides}
MERGE_RULE_TEXT = {'TestInternalExternalMasquerade':
	'the base table (flowTests) with the case\'s overrides applied, as the '
	'upstream test merges them in a loop over indexes (not interpreted)'}


# ---- file level

def read_source(args):
	if args.git:
		return subprocess.run(['git', '--git-dir', args.git, 'show',
			'%s:%s' % (args.commit, args.path)], check=True,
			capture_output=True, text=True).stdout
	with open(args.file) as f:
		return f.read()


def top_level(toks):
	"""(consts/vars dict of expressions, {func name: (params, body)})"""
	p = Parser(toks)
	decls = []
	funcs = {}
	while p.peek()[0] != 'eof':
		k, v = p.peek()
		if v in ('const', 'var'):
			p.next()
			if p.at('('):
				p.next()
				while not p.at(')'):
					if p.at(';'):
						p.next()
						continue
					decls.append(parse_decl(p))
				p.next()
			else:
				decls.append(parse_decl(p))
		elif v == 'func':
			p.next()
			if p.at('('):  # method
				p.skip_balanced()
			name = p.next()[1]
			if p.at('['):
				p.skip_balanced()
			params = p.parse_params()
			if p.at('('):
				p.skip_balanced()
			elif not p.at('{'):
				p.parse_type()
			start = p.p
			try:
				body = p.parse_block()
			except SyntaxError:
				p.p = start
				p.skip_balanced()
				body = []
			funcs[name] = (params, body)
		else:
			p.skip_statement()
	return decls, funcs


def parse_decl(p):
	name = p.next()[1]
	if not p.at('='):
		p.parse_type()
	p.expect('=')
	e = p.parse_expr()
	if p.at(';'):
		p.next()
	return name, e


def contains_flow_tests(body):
	return 'runPacketFlowTests' in repr(body)


def extract(text, differences):
	toks = tokenize(text)
	decls, raw_funcs = top_level(toks)
	globals_ = {}
	funcs = {n: Func(pb[0], pb[1], [{}]) for n, pb in raw_funcs.items()}
	interp = Interp(globals_, funcs, [], None)
	for name, e in decls:
		globals_[name] = interp.eval(e, [{}])
	tables = []
	skipped = {}
	for name, (params, body) in raw_funcs.items():
		if not name.startswith('Test') or not contains_flow_tests(body):
			continue
		it = Interp(globals_, funcs, tables, name)
		it.exec_block(body, [{}])
		if it.skipped:
			skipped[name] = sorted(set(it.skipped))
	# tables of one test and subtest get an index
	seen = {}
	for t in tables:
		key = (t['test'], t['subtest'])
		t['table'] = seen.get(key, 0)
		seen[key] = t['table'] + 1
		for f in t['flows']:
			ref = '%s/%s/%d/%s' % (t['test'], t['subtest'] or '', t['table'], f['name'])
			if ref in differences:
				f['kpx'] = differences[ref]
	consts = {k: v for k, v in globals_.items() if isinstance(v, (str, list))}
	return tables, skipped, consts


def main():
	ap = argparse.ArgumentParser()
	src = ap.add_mutually_exclusive_group(required=True)
	src.add_argument('--git', help='a kubernetes/kubernetes git directory')
	src.add_argument('--file', help='the test file itself')
	ap.add_argument('--commit', required=True)
	ap.add_argument('--path', required=True, help='the file\'s path in the repository')
	ap.add_argument('--repository', default='kubernetes/kubernetes',
		help='the repository the file was read from (a fork, say)')
	ap.add_argument('--note', default=None, help='how the file was obtained')
	ap.add_argument('--differences', default=None)
	ap.add_argument('-o', '--output', required=True)
	args = ap.parse_args()

	differences = {}
	if args.differences:
		with open(args.differences) as f:
			differences = json.load(f).get('flows', {})
	tables, skipped, consts = extract(read_source(args), differences)
	unused = set(differences) - {'%s/%s/%d/%s' % (t['test'], t['subtest'] or '', t['table'],
		f['name']) for t in tables for f in t['flows']}
	if unused:
		print('differences naming no flow: %s' % sorted(unused), file=sys.stderr)
		return 1
	doc = {
		'source': {'repository': args.repository, 'path': args.path,
			'commit': args.commit},
		'generator': 'scripts/upstream-flows.py',
		'conventions': consts,
		'skipped': skipped,
		'tables': tables,
	}
	if args.note:
		doc['source']['note'] = args.note
	with open(args.output, 'w') as f:
		json.dump(doc, f, indent=1, sort_keys=False)
		f.write('\n')
	n = sum(len(t['flows']) for t in tables)
	print('%s: %d tables, %d flows' % (args.output, len(tables), n))
	return 0


if __name__ == '__main__':
	sys.exit(main())
