variable "envs" {
  type = map(object({
    size  = optional(number, 2)
    tags  = optional(map(string), {})
    ports = optional(list(number), [80])
  }))
  default = {
    prod = { size = 3, tags = { Tier = "gold" } }
    dev  = {}
  }
}

variable "flag" {
  type    = bool
  default = "true"
}

variable "names" {
  type    = list(string)
  default = ["b", "a", "c"]
}

locals {
  upper_names = [for n in var.names : upper(n)]
  by_name     = { for i, n in var.names : n => i if n != "c" }
  grouped     = { for n in concat(var.names, ["a"]) : n => n... }
  sizes       = { for k, v in var.envs : k => v.size * 2 }
  msg         = <<-EOT
    hello %{ if var.flag }yes%{ else }no%{ endif }
    %{ for n in var.names }${n};%{ endfor }
  EOT
  ids         = aws_subnet.s[*].id
  first       = aws_subnet.s[0].id
  cidr        = cidrsubnet("10.0.0.0/16", 8, 3)
  neg         = -5 + 2
  div         = 7 / 2
  mod         = 7 % 3
  cmp         = 3 > 2 && !false
  nullish     = null
  cond        = var.flag ? "on" : "off"
  joined      = join(",", sort(var.names))
  idx         = var.names[1]
  legacy      = var.names.0
  fmt         = format("%s-%03d", "x", 7)
  enc         = jsonencode({ b = 1, a = [true, null] })
  mapped      = lookup(local.sizes, "prod", 0)
  nested      = { a = { b = { c = "deep" } } }
  deep        = local.nested.a.b.c
}

resource "aws_subnet" "s" {
  count      = 2
  cidr_block = cidrsubnet("10.0.0.0/16", 8, count.index)
  tags       = merge({ Name = "s-${count.index}" }, var.envs["prod"].tags)
}

resource "aws_thing" "t" {
  a = local.upper_names
  b = local.by_name
  c = local.grouped
  d = local.sizes
  e = local.msg
  f = local.ids
  g = local.first
  h = local.cidr
  i = [local.neg, local.div, local.mod, local.cmp, local.nullish]
  j = local.cond
  k = local.joined
  l = [local.idx, local.legacy]
  m = local.fmt
  n = local.enc
  o = local.mapped
  p = local.deep
  q = module.svc["prod"].name
  r = module.svc["dev"].ports
  s = module.counted[1].name
  t = length(module.counted)
  u = var.envs
  v = try(var.envs["nope"].size, -1)
  w = can(regex("^a", "abc"))
  x = "${path.module}/x"
  y = [for s in aws_subnet.s : s.tags.Name]
  z = { for k, m in module.svc : k => m.name }
}

module "svc" {
  source   = "./modules/svc"
  for_each = var.envs
  name     = "svc-${each.key}"
  size     = each.value.size
  ports    = each.value.ports
}

module "counted" {
  source = "./modules/svc"
  count  = 2
  name   = "c${count.index}"
  size   = count.index
  ports  = []
}

resource "aws_iam_role" "new" {
  for_each = toset(["r1"])
  name     = "role-${each.key}"
}

resource "aws_iam_role_policy" "p" {
  role   = aws_iam_role.new["r1"].name
  arn    = aws_iam_role.new["r1"].arn
  policy = jsonencode({ Role = aws_iam_role.new["r1"].name })
}
