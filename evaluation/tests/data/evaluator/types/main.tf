variable "opt" {
  type = list(object({
    name = string
    rules = optional(list(object({
      port = number
      cidr = optional(string, "0.0.0.0/0")
    })), [])
  }))
  default = [{ name = "a", rules = [{ port = 22 }] }, { name = "b" }]
}

variable "nn" {
  type     = string
  default  = "dflt"
  nullable = false
}

variable "required" {
  type = string
}

locals {
  nums = toset([443, 22, 80])
  strs = toset(["b", "a"])
}

resource "aws_sg" "s" {
  dynamic "ingress" {
    for_each = local.nums
    content {
      k = ingress.key
      v = ingress.value
    }
  }
  dynamic "egress" {
    for_each = local.strs
    content {
      k = egress.key
    }
  }
  w   = terraform.workspace
  r   = path.root
  req = var.required
  nn  = var.nn
  o   = var.opt
  f   = 0.1 + 0.2
  e   = 1e3
  h   = <<EOT
  keep
EOT
  mixed = true ? 1 : "x"
  vals  = values({ b = 2, a = 1 })
  spl   = [for r in var.opt[0].rules : r.cidr]
  tm    = tomap({ a = 1, b = "x" })
  lst   = tolist(local.strs)
  nlk   = lookup({ a = null }, "a", "d")
  cmpn  = 1 == 1.0
  strn  = "1" == 1
}

resource "aws_each" "n" {
  for_each = toset(["x"])
  value    = [for k, v in { b = 1, a = 2 } : "${k}${v}"]
}
