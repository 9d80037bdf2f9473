variable "name" { type = string }
variable "size" { type = number }
variable "ports" { type = list(number) }

resource "aws_instance" "i" {
  count         = var.size
  instance_type = var.size > 2 ? "large" : "small"
  tags = {
    Name  = "${var.name}-${count.index}"
    Index = count.index
  }
  dynamic "ebs" {
    for_each = var.ports
    content {
      port = ebs.value
      key  = ebs.key
    }
  }
}

output "name" { value = var.name }
output "ports" { value = var.ports }
output "ids" { value = aws_instance.i[*].id }
